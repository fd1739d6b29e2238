package backends

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"fmctl/state"
	"syscall"
	"time"
)

// TmuxWire runs a tmux command by speaking tmux's own client protocol on
// the server's socket, in this process, instead of starting a tmux client:
// the client process is most of what one tmux call costs (its start-up is
// about a bare call's whole time), and agents call fmctl in loops.
//
// It speaks only to a server it has proven: one that runs the very binary
// fmctl would otherwise start (the same file as the tmux on PATH), and that
// answered a harmless read over the wire with a version whose protocol
// fmctl was written against (wireVersionSupported). Every other call, and
// every call that cannot connect (no server yet: the tmux client starts
// one), goes to Exec unchanged. A call that fails after its command was
// sent is never retried: the command may have run.
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

// The protocol fmctl speaks: tmux-protocol.h and compat/imsg.h, unchanged
// for these messages from tmux 3.2 to 3.7c. The header is type, length,
// peer id (the protocol version) and pid, in host byte order; tmux before
// 3.6 splits the length word into a 16-bit length and 16-bit flags, which
// reads the same for every message fmctl sends (no file descriptor, so no
// flags) or accepts, on a little-endian machine. (On a big-endian one such a
// server reads the length as 0 and drops the client, which is not fatal: the
// version probe fails and every call gets a tmux client.)
const (
	wireProtocol   = 8
	wireHeaderSize = 16
	wireMaxMessage = 16384 // MAX_IMSGSIZE, header included

	msgVersion           = 12
	msgIdentifyFlags     = 100
	msgIdentifyTerm      = 101
	msgIdentifyTTYName   = 102
	msgIdentifyEnviron   = 105
	msgIdentifyDone      = 106
	msgIdentifyClientPID = 107
	msgIdentifyCWD       = 108
	msgIdentifyFeatures  = 109
	msgIdentifyLongFlags = 111
	msgCommand           = 200
	msgDetach            = 201
	msgDetachKill        = 202
	msgExit              = 203
	msgExited            = 204
	msgLock              = 206
	msgReady             = 207
	msgShell             = 209
	msgShutdown          = 210
	msgOldStderr         = 211 // tmux 3.0's output messages
	msgOldStdout         = 213
	msgSuspend           = 214
	msgExec              = 217
	msgFlags             = 218
	msgReadOpen          = 300
	msgRead              = 301
	msgReadDone          = 302
	msgWriteOpen         = 303
	msgWrite             = 304
	msgWriteReady        = 305
	msgWriteClose        = 306

	// Client flags a tmux client run as `tmux -u` sends: CLIENT_UTF8, and
	// CLIENT_DEFAULTSOCKET when the socket came from a label, not -S or
	// $TMUX.
	clientUTF8          = 0x10000
	clientDefaultSocket = 0x8000000
)

// errWireNotSent is a call the wire gave up on before its command reached
// the server, so Exec may run it.
var errWireNotSent = errors.New("tmux wire: command not sent")

// wireVersionSupported: the tmux releases whose client protocol this file
// follows (read from their source, run here against 3.3a). A newer or
// unknown server gets a tmux client.
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

// Start leaves a program running through Exec (a control-mode client).
func (w *TmuxWire) Start(c Cmd) (*Started, error) {
	if s, ok := w.Exec.(Starter); ok {
		return s.Start(c)
	}
	return nil, errNoStarter
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
	ok, consumed := w.prove(ctx, conn, label, env)
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
func (w *TmuxWire) prove(ctx context.Context, conn *wireConn, label bool, env []string) (ok, consumed bool) {
	bin := w.tmuxBinary()
	if bin == nil {
		return false, false
	}
	pid, err := peerPID(conn.f)
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

// wireSocket reads the server selection tmux would make from the options
// Tmux.server writes (-u, then -L name or -S path) and env: -S, else -L,
// else the socket named first in $TMUX, else the label "default", under
// $TMUX_TMPDIR or /tmp as tmux resolves them. label is whether the socket
// came from a label (tmux's CLIENT_DEFAULTSOCKET). A call without -u (the
// identify flags are -u's: the server prints to a client without
// CLIENT_UTF8 differently), with an empty -L or -S (tmux takes those as
// given, and $TMUX or "default" would name another server), or with any
// other option is left to a tmux client.
func wireSocket(args []string, env []string) (sock string, label bool, rest []string, ok bool) {
	var name, path string
	var utf8, named, pathed bool
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-u":
			utf8 = true
			args = args[1:]
		case (args[0] == "-L" || args[0] == "-S") && len(args) > 1 && !named && !pathed:
			if args[0] == "-L" {
				name, named = args[1], true
			} else {
				path, pathed = args[1], true
			}
			args = args[2:]
		default:
			return "", false, nil, false
		}
	}
	if !utf8 {
		return "", false, nil, false
	}
	if !named && !pathed {
		if t := envValue(env, "TMUX"); t != "" && t[0] != ',' {
			path, _, _ = strings.Cut(t, ",")
			pathed = true
		}
	}
	if pathed {
		return path, false, args, path != ""
	}
	if !named {
		name = "default"
	}
	if name == "" || strings.Contains(name, "/") {
		return "", false, nil, false
	}
	dir, ok := tmuxSocketDir(env)
	if !ok {
		return "", false, nil, false
	}
	return filepath.Join(dir, name), true, args, true
}

// tmuxSocketDir is tmux's per-user socket directory: $TMUX_TMPDIR (when it
// resolves) or /tmp, resolved, then tmux-UID, which tmux refuses unless it
// is this user's and closed to others; so does the wire.
func tmuxSocketDir(env []string) (string, bool) {
	var base string
	if d := envValue(env, "TMUX_TMPDIR"); d != "" {
		base, _ = realPath(d)
	}
	if base == "" {
		r, ok := realPath("/tmp")
		if !ok {
			return "", false
		}
		base = r
	}
	dir := filepath.Join(base, "tmux-"+strconv.Itoa(os.Getuid()))
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o007 != 0 {
		return "", false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return "", false
	}
	return dir, true
}

// realPath is realpath(3): the absolute path with every symlink resolved;
// a relative path is taken from the working directory, as tmux takes a
// relative $TMUX_TMPDIR.
func realPath(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", false
		}
		// Joined without cleaning: EvalSymlinks resolves each ".." against
		// the directory it is really in, as realpath does.
		p = wd + string(filepath.Separator) + p
	}
	r, err := filepath.EvalSymlinks(p)
	return r, err == nil && filepath.IsAbs(r)
}

func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val // the last one wins, as with exec
		}
	}
	return v
}

// wireConn is a connection to a tmux server that ctx bounds. It is a raw
// socket under an *os.File (which the runtime's poller serves, deadlines
// and all), not a net.Conn: the net package links the C resolver into the
// binaries, which costs every invocation about a millisecond of start-up.
type wireConn struct {
	f    *os.File
	stop func() bool
}

func (c *wireConn) Read(b []byte) (int, error)  { return c.f.Read(b) }
func (c *wireConn) Write(b []byte) (int, error) { return c.f.Write(b) }

func (c *wireConn) Close() error {
	c.stop()
	return c.f.Close()
}

// wireDial connects to the server's socket within ctx. The socket is
// non-blocking from the start, so a server too stalled to accept (a full
// backlog) fails the connect at once instead of hanging it.
func wireDial(ctx context.Context, sock string) (*wireConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fd, err := connectUnix(sock)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", sock, err)
	}
	f := os.NewFile(uintptr(fd), sock)
	if dl, ok := ctx.Deadline(); ok {
		_ = f.SetDeadline(dl)
	}
	// A cancelled call ends its reads and writes at once; Close ends the
	// watch.
	stop := context.AfterFunc(ctx, func() { _ = f.SetDeadline(time.Now()) })
	return &wireConn{f: f, stop: stop}, nil
}

// wireExchange runs one tmux command list (argv as the tmux client takes
// it) over conn, as one client: identify, the command, then its output
// until the server says the client may exit. stdin is what a
// `load-buffer -` reads.
func wireExchange(conn *wireConn, label bool, args, env []string, stdin []byte) (Output, error) {
	command, err := packCommand(args)
	if err != nil {
		return Output{}, fmt.Errorf("%w: %w", errWireNotSent, err)
	}
	msgs := identify(label, env)
	msgs = appendMessage(msgs, msgCommand, command)
	if _, err := conn.Write(msgs); err != nil {
		// A short write may have carried the command; only a write that
		// failed outright (nothing sent) is safe to run again.
		return Output{}, fmt.Errorf("write to the tmux server: %w", err)
	}
	return readReplies(conn, stdin)
}

// identify is the identify messages tmux's client sends before a command,
// in its order: flags, long flags, TERM, features, tty name ("": fmctl has
// no terminal to give), working directory, pid, environment, done.
func identify(label bool, env []string) []byte {
	flags := uint64(clientUTF8)
	if label {
		flags |= clientDefaultSocket
	}
	b := make([]byte, 0, 8192)
	b = appendMessage(b, msgIdentifyFlags, binary.NativeEndian.AppendUint32(nil, uint32(flags)))
	b = appendMessage(b, msgIdentifyLongFlags, binary.NativeEndian.AppendUint64(nil, flags))
	b = appendMessage(b, msgIdentifyTerm, cString(envValue(env, "TERM")))
	b = appendMessage(b, msgIdentifyFeatures, binary.NativeEndian.AppendUint32(nil, 0))
	b = appendMessage(b, msgIdentifyTTYName, cString(""))
	b = appendMessage(b, msgIdentifyCWD, cString(clientCWD(env)))
	b = appendMessage(b, msgIdentifyClientPID, binary.NativeEndian.AppendUint32(nil, uint32(os.Getpid())))
	for _, kv := range env {
		// tmux's client skips an entry too long for one message, and one
		// holding a NUL cannot be a C string at all.
		if len(kv)+1 > wireMaxMessage-wireHeaderSize || strings.IndexByte(kv, 0) >= 0 {
			continue
		}
		b = appendMessage(b, msgIdentifyEnviron, cString(kv))
	}
	return appendMessage(b, msgIdentifyDone, nil)
}

// clientCWD is the directory tmux's client reports: its working directory
// ($PWD when that names the same directory), else $HOME, else "/".
func clientCWD(env []string) string {
	wd, err := os.Getwd()
	if err != nil {
		if h := envValue(env, "HOME"); h != "" {
			return h
		}
		return "/"
	}
	if p := envValue(env, "PWD"); p != "" && p != wd {
		if a, err1 := os.Stat(p); err1 == nil {
			if b, err2 := os.Stat(wd); err2 == nil && os.SameFile(a, b) {
				return p
			}
		}
	}
	return wd
}

func cString(s string) []byte { return append([]byte(s), 0) }

// packCommand is MSG_COMMAND's body: argc, then each argument NUL-ended;
// a command too long for one message is left to a tmux client, which
// refuses it in its own words.
func packCommand(args []string) ([]byte, error) {
	b := binary.NativeEndian.AppendUint32(nil, uint32(len(args)))
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, errors.New("an argument holds a NUL byte")
		}
		b = append(b, a...)
		b = append(b, 0)
	}
	if wireHeaderSize+len(b) > wireMaxMessage {
		return nil, errors.New("command too long for one message")
	}
	return b, nil
}

func appendMessage(b []byte, typ uint32, body []byte) []byte {
	b = binary.NativeEndian.AppendUint32(b, typ)
	b = binary.NativeEndian.AppendUint32(b, uint32(wireHeaderSize+len(body)))
	b = binary.NativeEndian.AppendUint32(b, wireProtocol)
	b = binary.NativeEndian.AppendUint32(b, uint32(os.Getpid()))
	return append(b, body...)
}

// readReplies answers the server until it ends the client: it accepts the
// streams tmux opens onto the client's output and error, feeds stdin to a
// read of the client's input, and refuses any other file.
func readReplies(conn *wireConn, stdin []byte) (Output, error) {
	var out Output
	var stdout, stderr bytes.Buffer
	result := func() Output {
		out.Stdout, out.Stderr = stdout.Bytes(), stderr.Bytes()
		return out
	}
	streams := map[int32]int32{} // open output streams -> the client's fd
	buf := make([]byte, 0, 64<<10)
	chunk := make([]byte, 64<<10)
	for {
		for len(buf) >= wireHeaderSize {
			typ := binary.NativeEndian.Uint32(buf[0:])
			n := binary.NativeEndian.Uint32(buf[4:])
			if n < wireHeaderSize || n > wireMaxMessage {
				return result(), fmt.Errorf("tmux server sent a message of length %#x", n)
			}
			if len(buf) < int(n) {
				break
			}
			body := buf[wireHeaderSize:n]
			if typ == msgVersion {
				// The server refuses every message of another protocol
				// version, the command among them.
				return result(), fmt.Errorf("%w: the tmux server speaks protocol %d", errWireNotSent, binary.NativeEndian.Uint32(buf[8:])&0xff)
			}
			if typ == msgReadOpen {
				if err := feedInput(conn, body, stdin); err != nil {
					return result(), err
				}
				buf = buf[n:]
				continue
			}
			reply, done, err := answer(typ, body, streams, &stdout, &stderr, &out)
			if err != nil {
				return result(), err
			}
			if len(reply) > 0 {
				if _, err := conn.Write(reply); err != nil {
					return result(), fmt.Errorf("answer the tmux server: %w", err)
				}
			}
			if done {
				return result(), nil
			}
			buf = buf[n:]
		}
		if len(buf) > 0 && cap(buf)-len(buf) < wireMaxMessage {
			buf = append(make([]byte, 0, 64<<10), buf...)
		}
		m, err := conn.Read(chunk)
		buf = append(buf, chunk[:m]...)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return result(), errors.New("the tmux server closed the connection before the command finished")
			}
			return result(), fmt.Errorf("read from the tmux server: %w", err)
		}
	}
}

// answer handles one message from the server: the reply to write, and
// whether the client is done.
func answer(typ uint32, body []byte, streams map[int32]int32, stdout, stderr *bytes.Buffer, out *Output) ([]byte, bool, error) {
	word := func(i int) int32 { return int32(binary.NativeEndian.Uint32(body[4*i:])) }
	switch typ {
	case msgExit, msgShutdown:
		// As client_dispatch_exit_message reads it: the code (the client
		// exits with its low byte), then a message whose last byte is its
		// NUL, printed up to its first NUL and a newline, even when empty.
		if len(body) != 0 && len(body) < 4 {
			return nil, false, fmt.Errorf("tmux server sent an exit of %d bytes", len(body))
		}
		if len(body) >= 4 {
			out.ExitCode = int(uint8(word(0)))
		}
		if len(body) > 4 {
			msg := body[4 : len(body)-1]
			if i := bytes.IndexByte(msg, 0); i >= 0 {
				msg = msg[:i]
			}
			stderr.Write(msg)
			stderr.WriteByte('\n')
		}
		return nil, true, nil
	case msgExited:
		return nil, true, nil
	case msgWriteOpen:
		if len(body) < 12 {
			return nil, false, fmt.Errorf("tmux server sent a write-open of %d bytes", len(body))
		}
		// Printing opens stream 1 or 2; show-buffer and the like open a
		// stream of their own, but onto the client's output all the same.
		// A file by path (fd -1) is refused: fmctl never asks for one.
		stream, fd := word(0), word(1)
		path := strings.TrimRight(string(body[12:]), "\x00")
		errno := int32(0)
		if (fd != 1 && fd != 2) || (path != "" && path != "-") {
			errno = int32(syscall.EBADF)
		} else {
			streams[stream] = fd
		}
		r := binary.NativeEndian.AppendUint32(nil, uint32(stream))
		r = binary.NativeEndian.AppendUint32(r, uint32(errno))
		return appendMessage(nil, msgWriteReady, r), false, nil
	case msgWrite:
		if len(body) < 4 {
			return nil, false, fmt.Errorf("tmux server sent a write of %d bytes", len(body))
		}
		switch streams[word(0)] {
		case 1:
			stdout.Write(body[4:])
		case 2:
			stderr.Write(body[4:])
		}
		return nil, false, nil
	case msgOldStderr, msgOldStdout:
		return nil, false, errors.New("the tmux server is older than tmux 3.1's protocol")
	case msgDetach, msgDetachKill, msgReady, msgShell, msgLock, msgSuspend, msgExec:
		return nil, false, fmt.Errorf("the tmux server sent message %d, which only an attached client gets", typ)
	}
	// MSG_FLAGS, MSG_WRITE_CLOSE (of a stream that was refused), a read
	// cancelled after all of stdin went, and messages of later releases
	// ask nothing of a command client; tmux's client ignores unknown ones.
	return nil, false, nil
}

// feedInput answers a read of the client's input (load-buffer -): stdin in
// messages of at most the protocol's size, written one at a time from one
// buffer (a megabyte is not copied whole), then the end of the input. A
// read of anything but the client's input is refused.
func feedInput(conn *wireConn, body, stdin []byte) error {
	if len(body) < 8 {
		return fmt.Errorf("tmux server sent a read-open of %d bytes", len(body))
	}
	stream := binary.NativeEndian.Uint32(body[0:])
	fd := int32(binary.NativeEndian.Uint32(body[4:]))
	path := strings.TrimRight(string(body[8:]), "\x00")
	errno := uint32(0)
	if fd != 0 || (path != "" && path != "-") {
		errno = uint32(syscall.EBADF)
		stdin = nil
	}
	msg := make([]byte, 0, wireMaxMessage)
	for len(stdin) > 0 {
		n := min(len(stdin), wireMaxMessage-wireHeaderSize-4)
		msg = appendMessage(msg[:0], msgRead, binary.NativeEndian.AppendUint32(nil, stream))
		msg = append(msg, stdin[:n]...)
		binary.NativeEndian.PutUint32(msg[4:], uint32(len(msg)))
		if _, err := conn.Write(msg); err != nil {
			return fmt.Errorf("send input to the tmux server: %w", err)
		}
		stdin = stdin[n:]
	}
	done := binary.NativeEndian.AppendUint32(nil, stream)
	done = binary.NativeEndian.AppendUint32(done, errno)
	if _, err := conn.Write(appendMessage(msg[:0], msgReadDone, done)); err != nil {
		return fmt.Errorf("send input to the tmux server: %w", err)
	}
	return nil
}
