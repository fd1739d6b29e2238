package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// A scripted tmux server on a private socket, for what a real server will
// not do on demand: split its messages anywhere, send one of exactly the
// largest size, malformed ones, a protocol mismatch, close mid-call, or
// never answer. It checks every message the client sends as tmux 3.2 to
// 3.5a's server does before acting on it (a message that server would
// fatalx on fails the test), and the same script can face the wire and a
// real tmux client, so what the wire prints is compared with what tmux's
// own client prints for the same server.

type fakeConn struct {
	t          *testing.T
	c          *net.UnixConn
	strict     bool // the wire: no descriptors, so no header flags
	identified bool
}

// fail ends the script (its goroutine only) with a test error.
func (f *fakeConn) fail(format string, args ...any) {
	f.t.Errorf("fake tmux server: "+format, args...)
	runtime.Goexit()
}

// read returns the client's next message, checked as the server checks it.
func (f *fakeConn) read() (uint32, []byte) {
	hdr := make([]byte, headerSize)
	if _, err := io.ReadFull(f.c, hdr); err != nil {
		f.fail("read a header: %v", err)
	}
	typ := binary.NativeEndian.Uint32(hdr)
	// tmux before 3.6 reads a 16-bit length and 16-bit flags; 3.6 a 32-bit
	// length: the wire's must read the same both ways.
	n := binary.NativeEndian.Uint16(hdr[4:])
	if flags := binary.NativeEndian.Uint16(hdr[6:]); f.strict && flags != 0 {
		f.fail("message %d has header flags %#x", typ, flags)
	}
	if n < headerSize || n > maxMessage {
		f.fail("message %d has length %d", typ, n)
	}
	if v := binary.NativeEndian.Uint32(hdr[8:]) & 0xff; v != protocolVersion {
		f.fail("message %d has protocol %d", typ, v)
	}
	body := make([]byte, int(n)-headerSize)
	if _, err := io.ReadFull(f.c, body); err != nil {
		f.fail("read message %d's body: %v", typ, err)
	}
	if err := serverCheck(typ, body, &f.identified); err != nil {
		f.fail("%v", err)
	}
	return typ, body
}

// serverCheck is every size and format check tmux 3.2's server makes of
// the messages a command client sends (server-client.c, file.c), each a
// fatalx there.
func serverCheck(typ uint32, body []byte, identified *bool) error {
	cstring := len(body) > 0 && body[len(body)-1] == 0
	size := map[uint32]int{msgIdentifyFlags: 4, msgIdentifyLongFlags: 8, msgIdentifyFeatures: 4, msgIdentifyClientPID: 4,
		msgIdentifyDone: 0, 104 /* STDIN */ : 0, 110 /* STDOUT */ : 0, msgWriteReady: 8, msgReadDone: 8}
	switch {
	case typ >= msgIdentifyFlags && typ <= 112 && *identified:
		return fmt.Errorf("out-of-order identify message %d", typ)
	case typ == msgIdentifyTerm || typ == msgIdentifyTTYName || typ == msgIdentifyCWD || typ == msgIdentifyEnviron || typ == 112:
		if !cstring {
			return fmt.Errorf("bad identify string %d: %q", typ, body)
		}
	case typ == msgCommand:
		if len(body) < 4 || (len(body) > 4 && !cstring) {
			return fmt.Errorf("bad MSG_COMMAND %q", body)
		}
		if argc := binary.NativeEndian.Uint32(body); int(argc) != bytes.Count(body[4:], []byte{0}) {
			return fmt.Errorf("MSG_COMMAND argc %d for %q", argc, body[4:])
		}
	case typ == msgRead:
		if len(body) < 4 {
			return fmt.Errorf("bad MSG_READ size %d", len(body))
		}
	default:
		if want, ok := size[typ]; ok && len(body) != want {
			return fmt.Errorf("message %d of %d bytes, want %d", typ, len(body), want)
		}
	}
	if typ == msgIdentifyDone {
		*identified = true
	}
	return nil
}

// command reads the identify messages and the command, and returns its
// argv.
func (f *fakeConn) command() []string {
	for {
		typ, body := f.read()
		if typ == msgCommand {
			args := strings.Split(string(body[4:]), "\x00")
			return args[:len(args)-1]
		}
		if typ != msgIdentifyDone && (typ < msgIdentifyFlags || typ > 112) {
			f.fail("message %d before the command", typ)
		}
	}
}

// expect reads the client's next message and fails unless it is typ with
// body.
func (f *fakeConn) expect(typ uint32, body []byte) {
	if gotTyp, got := f.read(); gotTyp != typ || !bytes.Equal(got, body) {
		f.fail("the client sent %d %q, want %d %q", gotTyp, got, typ, body)
	}
}

// send writes b in pieces of the given sizes (the rest in one), each one
// read by the client before the next is written, so the client sees every
// split: a header cut short, a body apart from its header.
func (f *fakeConn) send(b []byte, pieces ...int) {
	for _, n := range pieces {
		if n >= len(b) {
			break
		}
		f.write(b[:n])
		f.drained()
		b = b[n:]
	}
	f.write(b)
}

func (f *fakeConn) write(b []byte) {
	if _, err := f.c.Write(b); err != nil {
		f.fail("write: %v", err)
	}
}

// drained waits until the client has read everything written (the
// socket's unread bytes, TIOCOUTQ, reach 0).
func (f *fakeConn) drained() {
	raw, err := f.c.SyscallConn()
	if err != nil {
		f.fail("%v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int32
		_ = raw.Control(func(fd uintptr) {
			syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCOUTQ, uintptr(unsafe.Pointer(&n)))
		})
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			f.fail("the client left %d bytes unread", n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// waitEOF reads until the client hangs up: what it sends after the
// script's end is checked, then ignored.
func (f *fakeConn) waitEOF() {
	_ = f.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		hdr := make([]byte, headerSize)
		if _, err := io.ReadFull(f.c, hdr); err != nil {
			return
		}
		n := int(binary.NativeEndian.Uint16(hdr[4:]))
		if n < headerSize {
			return
		}
		if _, err := io.ReadFull(f.c, make([]byte, n-headerSize)); err != nil {
			return
		}
	}
}

func msg(typ uint32, words []int32, tail string) []byte {
	var body []byte
	for _, w := range words {
		body = binary.NativeEndian.AppendUint32(body, uint32(w))
	}
	return appendMessage(nil, typ, append(body, tail...))
}

// fakeServer listens on a fresh socket and runs script on the first
// client that connects.
func fakeServer(t *testing.T, strict bool, script func(*fakeConn)) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fmwire")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		defer c.Close()
		script(&fakeConn{t: t, c: c, strict: strict})
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		os.RemoveAll(dir)
	})
	return sock
}

// overWire runs args against a fake server over the wire.
func overWire(t *testing.T, timeout time.Duration, stdin []byte, script func(*fakeConn)) (Result, error) {
	t.Helper()
	sock := fakeServer(t, true, script)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return exchange(conn, false, []string{"display-message", "x"}, os.Environ(), stdin)
}

// byClient runs the same against a fake server with tmux's own client.
func byClient(t *testing.T, stdin []byte, script func(*fakeConn)) Result {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	sock := fakeServer(t, false, script)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-u", "-S", sock, "display-message", "x")
	cmd.Env = without(os.Environ(), "TMUX")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() < 0) {
		t.Fatalf("tmux client: %v", err)
	}
	return Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: cmd.ProcessState.ExitCode()}
}

// without is env with no entry for name.
func without(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return out
}

// sameAsClient runs script both ways and fails where the wire's output
// differs from the tmux client's.
func sameAsClient(t *testing.T, stdin []byte, script func(*fakeConn)) Result {
	t.Helper()
	want := byClient(t, stdin, script)
	got, err := overWire(t, 10*time.Second, stdin, script)
	if err != nil {
		t.Fatalf("over the wire: %v", err)
	}
	if got.ExitCode != want.ExitCode || !bytes.Equal(got.Stdout, want.Stdout) || !bytes.Equal(got.Stderr, want.Stderr) {
		t.Errorf("over the wire: exit %d, stdout %q, stderr %q\ntmux client: exit %d, stdout %q, stderr %q",
			got.ExitCode, trunc(got.Stdout), trunc(got.Stderr), want.ExitCode, trunc(want.Stdout), trunc(want.Stderr))
	}
	return got
}

func ones(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = 1
	}
	return p
}

func trunc(b []byte) string {
	if len(b) > 80 {
		return fmt.Sprintf("%s...(%d bytes)", b[:80], len(b))
	}
	return string(b)
}
