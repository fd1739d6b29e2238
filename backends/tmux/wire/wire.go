// Package wire runs a tmux command by speaking tmux's own client
// protocol on the server's socket, in the calling process, instead of
// starting a tmux client: the client process is most of what one tmux call
// costs (about 2 ms of it), and agents call fmctl in loops.
//
// The protocol is tmux's private one, and the releases Debian and Ubuntu
// ship (3.2a to 3.6b) answer some malformed client messages by exiting
// (fatalx), which ends every agent on the server. So a call is carried only
// where that cannot happen or was asked for (Wire.OptIn), to a server proven
// on every connection to run the very tmux file PATH names, whose version
// that file reported itself (`tmux -V`, never asked over the socket).
// Everything else is ErrNotSent, and the caller starts a tmux client.
package wire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
)

// Wire carries tmux calls over the server's socket where that is safe.
type Wire struct {
	// Binary is the tmux the calls name ("tmux", or FM_TMUX_BIN), looked
	// up on PATH once; its file is stat'ed again on every call.
	Binary string
	// OptIn (FM_TMUX_WIRE=1) also carries calls to the releases whose
	// protocol the wire was written from (3.2 to 3.7), not only the ones it
	// may not kill and was tested against (onByDefault).
	OptIn bool
	// CachePath keeps each tmux file's `tmux -V` across processes, so only
	// the first process after tmux changes runs it; "" runs it once per
	// process.
	CachePath string

	mu       sync.Mutex
	path     string // Binary on PATH; "" when not found
	looked   bool
	versions map[string]string // tmux file identity -> its version (this process)
}

// Result is what a tmux client would have printed and exited with.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// ErrNotSent is a call the wire did not carry, or gave up on before its
// command reached the server, so a tmux client may run it.
var ErrNotSent = errors.New("tmux wire: command not sent")

// Run runs one tmux invocation (args as a tmux client takes them after its
// name, env its whole environment, stdin what a `load-buffer -` reads). An
// error other than ErrNotSent came after the command was sent: it may have
// run, so it must not be run again.
func (w *Wire) Run(ctx context.Context, args, env []string, stdin []byte) (Result, error) {
	if !peerProof {
		return Result{}, fmt.Errorf("%w: no peer credentials on this system", ErrNotSent)
	}
	sock, label, command, ok := serverSocket(args, env)
	if !ok || len(command) == 0 {
		return Result{}, fmt.Errorf("%w: not a call the wire makes", ErrNotSent)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		// No server yet: the tmux client starts one, or says it is gone;
		// and no tmux -V is run for a call the wire could not carry anyway.
		return Result{}, fmt.Errorf("%w: no server socket at %s", ErrNotSent, sock)
	}
	bin, err := w.permitted(ctx)
	if err != nil {
		return Result{}, err
	}
	c, err := dial(ctx, sock)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	defer c.Close()
	if err := provePeer(c, bin); err != nil {
		return Result{}, err
	}
	return exchange(c, label, command, env, stdin)
}

// permitted is the tmux file on PATH when its own version allows the wire.
// The version is read before any connection: a server of a release the
// wire must not speak to never sees one.
func (w *Wire) permitted(ctx context.Context) (os.FileInfo, error) {
	path := w.lookPath()
	if path == "" {
		return nil, fmt.Errorf("%w: %s is not on PATH", ErrNotSent, w.Binary)
	}
	bin, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	v, err := w.version(ctx, path, bin)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	if !onByDefault(v) && !(w.OptIn && protocolKnown(v)) {
		return nil, fmt.Errorf("%w: tmux %s is not a release the wire speaks to", ErrNotSent, v)
	}
	return bin, nil
}

// provePeer checks, on this connection, that the process listening on the
// socket (SO_PEERCRED) runs the very file bin is: a wrapper script, a fake,
// a server started by another tmux build, or one whose tmux was replaced
// on disk since it started, gets a tmux client. A socket proven by an
// earlier call proves nothing now: the server behind a path can change
// between two calls of one process.
func provePeer(c *serverConn, bin os.FileInfo) error {
	pid, err := peerPID(c.fd)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	exe, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	if !os.SameFile(exe, bin) {
		return fmt.Errorf("%w: the server (pid %d) does not run the tmux on PATH", ErrNotSent, pid)
	}
	return nil
}

func (w *Wire) lookPath() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.looked {
		w.looked = true
		w.path, _ = exec.LookPath(w.Binary)
	}
	return w.path
}
