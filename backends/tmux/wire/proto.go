package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The protocol fmctl speaks: tmux-protocol.h and compat/imsg.h, unchanged
// for these messages from tmux 3.2 to 3.7c. The header is type, length,
// peer id (the protocol version) and pid, in host byte order; tmux before
// 3.6 splits the length word into a 16-bit length and 16-bit flags, which
// reads the same for every message fmctl sends (no file descriptor, so no
// flags) or accepts, on a little-endian machine. (On a big-endian one such a
// server reads the length as 0 and drops the client, which is not fatal: the
// call fails. Only FM_TMUX_WIRE=1 speaks to a server before 3.7.)
const (
	protocolVersion = 8
	headerSize      = 16
	maxMessage      = 16384 // MAX_IMSGSIZE, header included

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

// serverConn is a connection to a tmux server that ctx bounds: a raw
// blocking socket whose reads and writes are bounded by socket timeouts set
// to what is left of ctx's deadline, and cut short (shutdown) when ctx is
// cancelled. Not a net.Conn: the net package links the C resolver into the
// binaries, which costs every start about a millisecond; and not the
// runtime's poller either, whose set-up and park-and-wake cost a call more
// than the blocking read it replaces.
type serverConn struct {
	fd       int
	deadline time.Time // zero: none
	stop     func() bool
	mu       sync.Mutex // guards fd against a cancel racing Close
	closed   bool
}

// errTimeout is a read or write that met the call's deadline.
var errTimeout = fmt.Errorf("the tmux server did not answer in time: %w", os.ErrDeadlineExceeded)

func (c *serverConn) Read(b []byte) (int, error) {
	for {
		if err := c.arm(syscall.SO_RCVTIMEO); err != nil {
			return 0, err
		}
		n, err := syscall.Read(c.fd, b)
		switch {
		case err == nil && n == 0 && len(b) > 0:
			return 0, io.EOF
		case err == nil:
			return n, nil
		case err == syscall.EINTR, err == syscall.EAGAIN && !c.expired():
			continue // a signal, or the timeout fired a hair early
		case err == syscall.EAGAIN:
			return 0, errTimeout
		}
		return 0, err
	}
}

func (c *serverConn) Write(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		if err := c.arm(syscall.SO_SNDTIMEO); err != nil {
			return written, err
		}
		n, err := syscall.Write(c.fd, b[written:])
		if n > 0 {
			written += n
		}
		switch {
		case err == nil, err == syscall.EINTR, err == syscall.EAGAIN && !c.expired():
			continue
		case err == syscall.EAGAIN:
			return written, errTimeout
		}
		return written, err
	}
	return written, nil
}

// arm sets the socket timeout opt to what is left of the deadline.
func (c *serverConn) arm(opt int) error {
	if c.deadline.IsZero() {
		return nil
	}
	left := time.Until(c.deadline)
	if left <= 0 {
		return errTimeout
	}
	tv := syscall.NsecToTimeval(max(left.Nanoseconds(), int64(time.Microsecond)))
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv)
}

func (c *serverConn) expired() bool {
	return !c.deadline.IsZero() && !time.Now().Before(c.deadline)
}

func (c *serverConn) Close() error {
	c.stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return syscall.Close(c.fd)
}

// dial connects to the server's socket within ctx. The connect itself
// does not block (a server too stalled to accept, with a full backlog,
// fails it at once); the connection then blocks, bounded by ctx.
func dial(ctx context.Context, sock string) (*serverConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fd, err := connectUnix(sock)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", sock, err)
	}
	c := &serverConn{fd: fd}
	c.deadline, _ = ctx.Deadline()
	// A cancelled call (a signal) ends its reads and writes at once; the
	// deadline is the socket timeouts' to keep, as errTimeout.
	c.stop = context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closed {
			_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		}
	})
	return c, nil
}

// exchange runs one tmux command list (argv as the tmux client takes
// it) over conn, as one client: identify, the command, then its output
// until the server says the client may exit. stdin is what a
// `load-buffer -` reads.
func exchange(conn *serverConn, label bool, args, env []string, stdin []byte) (Result, error) {
	command, err := packCommand(args)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	msgs := identify(label, env)
	msgs = appendMessage(msgs, msgCommand, command)
	if _, err := conn.Write(msgs); err != nil {
		// A short write may have carried the command; only a write that
		// failed outright (nothing sent) is safe to run again.
		return Result{}, fmt.Errorf("write to the tmux server: %w", err)
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
	b = appendMessage(b, msgIdentifyClientPID, binary.NativeEndian.AppendUint32(nil, uint32(ownPID())))
	for _, kv := range env {
		// tmux's client skips an entry too long for one message, and one
		// holding a NUL cannot be a C string at all.
		if len(kv)+1 > maxMessage-headerSize || strings.IndexByte(kv, 0) >= 0 {
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
	if headerSize+len(b) > maxMessage {
		return nil, errors.New("command too long for one message")
	}
	return b, nil
}

// ownPID is this process's pid, which every message header carries: read
// once, since os.Getpid is a system call and a call's identify is some
// fifty messages.
var ownPID = sync.OnceValue(os.Getpid)

func appendMessage(b []byte, typ uint32, body []byte) []byte {
	b = binary.NativeEndian.AppendUint32(b, typ)
	b = binary.NativeEndian.AppendUint32(b, uint32(headerSize+len(body)))
	b = binary.NativeEndian.AppendUint32(b, protocolVersion)
	b = binary.NativeEndian.AppendUint32(b, uint32(ownPID()))
	return append(b, body...)
}

// readReplies answers the server until it ends the client: it accepts the
// streams tmux opens onto the client's output and error, feeds stdin to a
// read of the client's input, and refuses any other file.
func readReplies(conn *serverConn, stdin []byte) (Result, error) {
	var out Result
	var stdout, stderr bytes.Buffer
	result := func() Result {
		out.Stdout, out.Stderr = stdout.Bytes(), stderr.Bytes()
		return out
	}
	streams := map[int32]int32{} // open output streams -> the client's fd
	buf := make([]byte, 0, 64<<10)
	chunk := make([]byte, 64<<10)
	for {
		for len(buf) >= headerSize {
			typ := binary.NativeEndian.Uint32(buf[0:])
			n := binary.NativeEndian.Uint32(buf[4:])
			if n < headerSize || n > maxMessage {
				return result(), fmt.Errorf("tmux server sent a message of length %#x", n)
			}
			if len(buf) < int(n) {
				break
			}
			body := buf[headerSize:n]
			if typ == msgVersion {
				// The server refuses every message of another protocol
				// version, the command among them.
				return result(), fmt.Errorf("%w: the tmux server speaks protocol %d", ErrNotSent, binary.NativeEndian.Uint32(buf[8:])&0xff)
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
		if len(buf) > 0 && cap(buf)-len(buf) < maxMessage {
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
func answer(typ uint32, body []byte, streams map[int32]int32, stdout, stderr *bytes.Buffer, out *Result) ([]byte, bool, error) {
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
func feedInput(conn *serverConn, body, stdin []byte) error {
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
	msg := make([]byte, 0, maxMessage)
	for len(stdin) > 0 {
		n := min(len(stdin), maxMessage-headerSize-4)
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
