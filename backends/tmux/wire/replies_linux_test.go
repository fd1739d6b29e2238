package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every way of ending a command: each exit the server can send prints and
// exits as the tmux client does, the code's low byte and the message up to
// its NUL, even an empty one.
func TestWireExitsAsTheTmuxClient(t *testing.T) {
	for name, exit := range map[string][]byte{
		"bare":              appendMessage(nil, msgExit, nil),
		"zero":              msg(msgExit, []int32{0}, ""),
		"one":               msg(msgExit, []int32{1}, ""),
		"message":           msg(msgExit, []int32{1}, "access not allowed\x00"),
		"empty message":     msg(msgExit, []int32{0}, "\x00"),
		"NUL inside":        msg(msgExit, []int32{2}, "a\x00b\x00"),
		"no NUL at the end": msg(msgExit, []int32{2}, "abc"),
		"code over a byte":  msg(msgExit, []int32{257}, ""),
		"negative code":     msg(msgExit, []int32{-1}, ""),
		"shutdown":          appendMessage(nil, msgShutdown, nil),
		"exited":            appendMessage(nil, msgExited, nil),
	} {
		t.Run(name, func(t *testing.T) {
			sameAsClient(t, nil, func(f *fakeConn) {
				f.command()
				f.send(exit)
				f.waitEOF()
			})
		})
	}
}

// Result split anywhere, a message of exactly the largest size, a stream
// of its own onto the client's output (show-buffer's), and messages a
// command client ignores arrive as the tmux client prints them.
func TestWireReadsOutputSplitAnywhere(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1023)[:maxMessage-headerSize-4]
	var script []byte
	script = append(script, msg(msgWriteOpen, []int32{1, 1, 0}, "")...)
	script = append(script, msg(msgWrite, []int32{1}, "out ")...)
	script = append(script, msg(msgWrite, []int32{1}, string(big))...)
	script = append(script, msg(msgFlags, nil, string(make([]byte, 8)))...)
	script = append(script, msg(999, nil, "a later release's message")...)
	script = append(script, msg(msgWriteOpen, []int32{2, 2, 0}, "")...)
	script = append(script, msg(msgWrite, []int32{2}, "err\n")...)
	script = append(script, msg(msgWrite, []int32{1}, "\n")...)
	script = append(script, msg(msgExit, []int32{1}, "")...)
	bigEnd := (headerSize + 12) + (headerSize + 4 + len("out ")) + maxMessage
	for name, pieces := range map[string][]int{
		"whole":               nil,
		"header cut short":    {5, 5, 5, 5},
		"header then body":    {headerSize, 12, headerSize},
		"largest cut":         {headerSize + 12 + headerSize + 8, headerSize + 2, maxMessage - headerSize - 3},
		"byte at a time":      ones(80),
		"largest at boundary": {bigEnd, 1},
	} {
		t.Run(name, func(t *testing.T) {
			out := sameAsClient(t, nil, func(f *fakeConn) {
				f.command()
				f.send(script, pieces...)
				f.waitEOF()
			})
			if want := "out " + string(big) + "\n"; string(out.Stdout) != want {
				t.Errorf("stdout %q, want %q", trunc(out.Stdout), trunc([]byte(want)))
			}
		})
	}
}

// The client answers opens as tmux's does: output and error are taken
// (ready, error 0), a file by path is not the wire's to open; and a read of
// its input gets stdin in messages of at most the largest size, then done.
func TestWireAnswersOpens(t *testing.T) {
	stdin := bytes.Repeat([]byte("paste line\n"), 4000)
	got, err := overWire(t, 10*time.Second, stdin, func(f *fakeConn) {
		f.command()
		f.send(msg(msgWriteOpen, []int32{1, 1, 0}, ""))
		f.expect(msgWriteReady, msg(0, []int32{1, 0}, "")[headerSize:])
		f.send(msg(msgWriteOpen, []int32{3, 1, 0}, "-\x00"))
		f.expect(msgWriteReady, msg(0, []int32{3, 0}, "")[headerSize:])
		f.send(msg(msgWriteOpen, []int32{4, -1, int32(os.O_APPEND)}, "/tmp/x\x00"))
		f.expect(msgWriteReady, msg(0, []int32{4, int32(syscall.EBADF)}, "")[headerSize:])
		f.send(msg(msgReadOpen, []int32{5, 0}, "-\x00"))
		var data []byte
		for {
			typ, body := f.read()
			if typ == msgReadDone {
				if !bytes.Equal(body, msg(0, []int32{5, 0}, "")[headerSize:]) {
					f.fail("read done %q", body)
				}
				break
			}
			if typ != msgRead || binary.NativeEndian.Uint32(body) != 5 {
				f.fail("message %d %q while reading", typ, trunc(body))
			}
			data = append(data, body[4:]...)
		}
		if !bytes.Equal(data, stdin) {
			f.fail("read %d bytes of input, want %d", len(data), len(stdin))
		}
		f.send(msg(msgReadOpen, []int32{6, -1}, "/etc/passwd\x00"))
		f.expect(msgReadDone, msg(0, []int32{6, int32(syscall.EBADF)}, "")[headerSize:])
		f.send(msg(msgWrite, []int32{3}, "shown"))
		f.send(msg(msgWriteClose, []int32{3}, ""))
		f.send(msg(msgExit, []int32{0}, ""))
	})
	if err != nil || string(got.Stdout) != "shown" {
		t.Fatalf("stdout %q, err %v", got.Stdout, err)
	}
}

// A reply no tmux server sends ends the call with an error, at once: a
// length out of range (or carrying a descriptor, either header's way),
// and bodies too short for their type.
func TestWireRefusesMalformedReplies(t *testing.T) {
	header := func(typ, length uint32) []byte {
		b := binary.NativeEndian.AppendUint32(nil, typ)
		b = binary.NativeEndian.AppendUint32(b, length)
		b = binary.NativeEndian.AppendUint32(b, protocolVersion)
		return append(binary.NativeEndian.AppendUint32(b, 1), make([]byte, 64)...)
	}
	for name, reply := range map[string][]byte{
		"too short":          header(msgWrite, headerSize-1),
		"too long":           header(msgWrite, maxMessage+1),
		"descriptor, 3.5":    header(msgWrite, 1<<16|(headerSize+4)),
		"descriptor, 3.6":    header(msgWrite, 1<<31|(headerSize+4)),
		"short exit":         msg(msgExit, nil, "\x01\x02"),
		"short write-open":   msg(msgWriteOpen, []int32{1, 1}, ""),
		"short write":        msg(msgWrite, nil, "\x01"),
		"short read-open":    msg(msgReadOpen, []int32{1}, ""),
		"attached client's":  appendMessage(nil, msgReady, nil),
		"tmux 3.0's output":  msg(msgOldStdout, nil, string(make([]byte, 8))),
		"server closed":      nil,
		"closed in a header": msg(msgExit, []int32{0}, "")[:9],
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := overWire(t, 5*time.Second, nil, func(f *fakeConn) {
				f.command()
				f.send(reply)
			})
			if err == nil || errors.Is(err, ErrNotSent) {
				t.Fatalf("err = %v, want a failure after the command was sent", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// A server of another protocol answers the first message with its version
// and drops the rest: the command was not taken, so a tmux client may run
// it. A server that never answers ends the call at its deadline.
func TestWireProtocolMismatchAndSilence(t *testing.T) {
	_, err := overWire(t, 5*time.Second, nil, func(f *fakeConn) {
		f.read()
		v := appendMessage(nil, msgVersion, nil)
		binary.NativeEndian.PutUint32(v[8:], 7)
		f.send(v)
		f.waitEOF()
	})
	if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "protocol 7") {
		t.Errorf("protocol 7: %v, want not sent", err)
	}

	start := time.Now()
	_, err = overWire(t, 300*time.Millisecond, nil, func(f *fakeConn) {
		f.command()
		f.waitEOF()
	})
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a silent server: %v, want the deadline", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a silent server held the call %v", d)
	}
}

// The wire identifies as tmux's client does, message for message (less
// the descriptors of its input and output, which fmctl does not send):
// the same flags, TERM, tty name, directory and environment, an entry of
// exactly the largest message sent and one a byte longer left out.
func TestWireIdentifiesAsTheTmuxClient(t *testing.T) {
	t.Setenv("FMWIRE_LONG", strings.Repeat("v", maxMessage-headerSize-len("FMWIRE_LONG=")-1))
	t.Setenv("FMWIRE_LONGER", strings.Repeat("v", maxMessage-headerSize-len("FMWIRE_LONGER=")))
	type message struct {
		typ  uint32
		body string
	}
	record := func(ch chan<- []message) func(*fakeConn) {
		return func(f *fakeConn) {
			var msgs []message
			for {
				typ, body := f.read()
				switch {
				case typ == 104 || typ == 110: // STDIN, STDOUT: descriptors
				case typ == msgIdentifyClientPID:
					msgs = append(msgs, message{typ, fmt.Sprint(len(body))})
				case typ == msgIdentifyEnviron && strings.HasPrefix(string(body), "TMUX="):
				default:
					msgs = append(msgs, message{typ, string(body)})
				}
				if typ == msgCommand {
					break
				}
			}
			ch <- msgs
			f.send(msg(msgExit, []int32{0}, ""))
			f.waitEOF()
		}
	}
	client, wire := make(chan []message, 1), make(chan []message, 1)
	byClient(t, nil, record(client))
	if _, err := overWire(t, 10*time.Second, nil, record(wire)); err != nil {
		t.Fatal(err)
	}
	want, got := <-client, <-wire
	// tmux 3.5's client sends its flags as LONGFLAGS twice where 3.2-3.4
	// send FLAGS (the low 32 bits) then LONGFLAGS, which the wire does;
	// every allowed server reads both the same.
	if len(want) > 1 && want[0].typ == msgIdentifyLongFlags && want[1].typ == msgIdentifyLongFlags && len(want[0].body) == 8 {
		want[0] = message{msgIdentifyFlags, want[0].body[:4]}
	}
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g message
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Fatalf("message %d: the wire sent %d %q, the tmux client %d %q", i, g.typ, trunc([]byte(g.body)), w.typ, trunc([]byte(w.body)))
		}
	}
	long := 0
	for _, m := range got {
		if m.typ == msgIdentifyEnviron && strings.HasPrefix(m.body, "FMWIRE_LONG") {
			long++
		}
	}
	if long != 1 {
		t.Errorf("%d of the long environment entries were sent, want 1", long)
	}
}

// A call whose context is cancelled (a signal reached a verb that waits)
// ends at once, not at its deadline: the blocked read is shut down.
func TestWireCancelEndsABlockedCall(t *testing.T) {
	sock := fakeServer(t, true, func(f *fakeConn) {
		f.command()
		f.waitEOF()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err = exchange(conn, false, []string{"display-message", "x"}, os.Environ(), nil)
	if err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a cancelled call took %v to end, want about 100 ms", d)
	}
}
