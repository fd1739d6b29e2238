package backends

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"fmctl/state"
)

// TmuxWire runs a tmux command by speaking tmux's own client protocol on
// the server's socket, in this process, instead of starting a tmux client:
// the client process is most of what one tmux call costs (its start-up is
// about a bare call's whole time), and agents call fmctl in loops.
//
// It speaks only to a server it has proven: one that runs the very binary
// fmctl would otherwise start (the same file as the tmux on PATH), and that
// answered a harmless read over the wire (once per tmux file, then kept in
// CachePath) with a version whose protocol fmctl follows
// (wireVersionSupported). Every other call, and every call that cannot
// connect (no server yet: the tmux client starts one), goes to Exec
// unchanged. A call that fails after its command was sent is never
// retried: the command may have run.
//
// The messages are the ones tmux's own client sends for one command, with
// the same sizes: a server that reads a malformed one exits (fatalx), and
// with it every agent it holds. fmctl sends no file descriptors, so the
// server sees a client whose input is not a terminal, as it does a tmux
// client run from fmctl (whose input is /dev/null).
type TmuxWire struct {
	Exec   Runner // runs every call the wire does not carry
	Binary string // the tmux program a Cmd names ("tmux")
	// TracePath, when set, gets one line per call carried over the wire,
	// named wireTraceName, beside the exec runner's lines.
	TracePath string
	// CachePath keeps the proven tmux file's version across processes, so
	// only the first process after tmux changes asks the server for it
	// (a round trip, about a quarter of a call's cost); "" asks every
	// process.
	CachePath string

	mu      sync.Mutex
	proven  map[string]bool // socket path -> the wire may carry its calls (this process)
	binary  os.FileInfo     // the tmux on PATH, looked up once
	binDone bool
}

// wireTraceName is how a wire call is named in a runner trace.
const wireTraceName = "tmux (wire)"

// errWireNotSent is a call the wire gave up on before its command reached
// the server, so Exec may run it.
var errWireNotSent = errors.New("tmux wire: command not sent")

// wireVersionSupported: the tmux releases whose client protocol the wire
// follows (read from their source; scripts/wire-versions.sh runs the wire
// against 3.2a, 3.4, 3.5a, 3.6b and 3.7c, the machine's tmux is 3.3a). A
// newer or unknown server gets a tmux client.
func wireVersionSupported(v string) bool {
	major, rest, ok := strings.Cut(strings.TrimSpace(v), ".")
	if !ok || major != "3" || rest == "" || rest[0] < '2' || rest[0] > '7' {
		return false
	}
	suffix := rest[1:]
	return suffix == "" || (len(suffix) == 1 && suffix[0] >= 'a' && suffix[0] <= 'z')
}

func (w *TmuxWire) Run(ctx context.Context, c Cmd) (Output, error) {
	if c.Path != w.Binary {
		return w.Exec.Run(ctx, c)
	}
	env := append(without(os.Environ(), c.Unset), c.Env...)
	sock, label, args, ok := wireSocket(c.Args, env)
	if !ok || len(args) == 0 {
		return w.Exec.Run(ctx, c)
	}
	conn := w.open(ctx, sock, label, env)
	if conn == nil {
		return w.Exec.Run(ctx, c)
	}
	start := time.Now()
	out, err := wireExchange(conn, label, args, env, c.Stdin)
	conn.Close()
	if errors.Is(err, errWireNotSent) {
		// The server refused the messages unread (another protocol);
		// a tmux client says so in its own words.
		w.forget(sock)
		return w.Exec.Run(ctx, c)
	}
	w.trace(c, time.Since(start))
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return out, &RunError{Cmd: c, ExitCode: -1, Stderr: string(out.Stderr), Err: err}
	}
	if out.ExitCode != 0 {
		return out, &RunError{Cmd: c, ExitCode: out.ExitCode, Stderr: string(out.Stderr), Err: fmt.Errorf("exit status %d", out.ExitCode)}
	}
	return out, nil
}

// open returns a connection to the server on sock that the wire may carry
// a call over, or nil when the call goes to a tmux client: the server is
// not running (the client starts it, or says it is gone), or it was not
// proven. A server is proven once per process (prove).
func (w *TmuxWire) open(ctx context.Context, sock string, label bool, env []string) *wireConn {
	w.mu.Lock()
	defer w.mu.Unlock()
	ok, known := w.proven[sock]
	if known && !ok {
		return nil
	}
	conn, err := wireDial(ctx, sock)
	if err != nil {
		return nil
	}
	if known {
		return conn
	}
	ok, consumed := w.prove(conn, label, env)
	if w.proven == nil {
		w.proven = map[string]bool{}
	}
	w.proven[sock] = ok
	if !ok || consumed {
		conn.Close()
	}
	if !ok {
		return nil
	}
	if consumed {
		if conn, err = wireDial(ctx, sock); err != nil {
			return nil
		}
	}
	return conn
}

func (w *TmuxWire) forget(sock string) {
	w.mu.Lock()
	delete(w.proven, sock)
	w.mu.Unlock()
}

// prove reports whether the wire may carry calls to the server conn
// reaches: the process listening (SO_PEERCRED) runs the very file the tmux
// on PATH is, and that file is a supported release. Its version is read
// from the cache (CachePath, keyed by the file's identity) or else asked
// over conn, which is then consumed.
func (w *TmuxWire) prove(conn *wireConn, label bool, env []string) (ok, consumed bool) {
	bin := w.tmuxBinary()
	if bin == nil {
		return false, false
	}
	pid, err := peerPID(conn.fd)
	if err != nil {
		return false, false
	}
	exe, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil || !os.SameFile(exe, bin) {
		return false, false
	}
	key := binaryKey(bin)
	if v, ok := w.cachedVersion(key); ok {
		return wireVersionSupported(v), false
	}
	out, err := wireExchange(conn, label, []string{"display-message", "-p", "#{version}"}, env, nil)
	if err != nil || out.ExitCode != 0 {
		return false, true
	}
	v := strings.TrimSpace(string(out.Stdout))
	w.cacheVersion(key, v)
	return wireVersionSupported(v), true
}

// tmuxBinary is the file the tmux on PATH names, looked up once.
func (w *TmuxWire) tmuxBinary() os.FileInfo {
	if !w.binDone {
		w.binDone = true
		if p, err := exec.LookPath(w.Binary); err == nil {
			w.binary, _ = os.Stat(p)
		}
	}
	return w.binary
}

// cachedVersion is the version the cache holds for the tmux file whose
// identity is key. The cache holds one line, "<key> <version>": the last
// tmux a server was proven to run.
func (w *TmuxWire) cachedVersion(key string) (string, bool) {
	if w.CachePath == "" || key == "" {
		return "", false
	}
	data, err := state.ReadSmallFile(w.CachePath, 4096)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	k, v, ok := strings.Cut(line, "\t")
	return v, ok && k == key && v != ""
}

// cacheVersion records the version of the tmux file whose identity is
// key. A cache that cannot be written only costs the next process the
// question.
func (w *TmuxWire) cacheVersion(key, version string) {
	if w.CachePath == "" || key == "" || strings.ContainsAny(version, "\t\n") {
		return
	}
	if err := os.MkdirAll(filepath.Dir(w.CachePath), 0o755); err != nil {
		return
	}
	_ = state.WriteAtomic(w.CachePath, []byte(key+"\t"+version+"\n"))
}

func (w *TmuxWire) trace(c Cmd, d time.Duration) {
	if w.TracePath != "" {
		appendTrace(w.TracePath, Cmd{Path: wireTraceName, Args: c.Args}, d)
	}
}
