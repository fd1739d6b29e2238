package remote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"
)

// The messages of OpenSSH's multiplexing protocol (PROTOCOL.mux in its
// source) that a health check needs: each packet is a uint32 length, then
// a uint32 type and its body.
const (
	muxHello      = 0x00000001
	muxAliveCheck = 0x10000004
	muxAlive      = 0x80000005
	muxVersion    = 4
)

// errMuxVersion: the master speaks another mux version; ssh -O check is
// asked instead.
var errMuxVersion = fmt.Errorf("mux protocol version is not %d", muxVersion)

// muxCheck asks the master on socket path what `ssh -O check` asks
// (hellos, then an alive check) without starting an ssh: a master that
// died refuses the connection, a wedged one never answers by the deadline.
// It returns the master's pid.
func muxCheck(path string, deadline time.Time) (int, error) {
	conn, err := dialUnix(path, deadline)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if err := writeMux(conn, muxHello, muxVersion); err != nil {
		return 0, err
	}
	hello, err := readMux(conn)
	if err != nil {
		return 0, err
	}
	if len(hello) < 2 || hello[0] != muxHello {
		return 0, fmt.Errorf("the master's first packet is not a hello")
	}
	if hello[1] != muxVersion {
		return 0, errMuxVersion
	}
	const requestID = 1
	if err := writeMux(conn, muxAliveCheck, requestID); err != nil {
		return 0, err
	}
	alive, err := readMux(conn)
	if err != nil {
		return 0, err
	}
	if len(alive) < 3 || alive[0] != muxAlive || alive[1] != requestID {
		return 0, fmt.Errorf("the master answered the alive check with packet type %#x", alive[0])
	}
	return int(alive[2]), nil
}

func writeMux(w io.Writer, words ...uint32) error {
	buf := binary.BigEndian.AppendUint32(nil, uint32(4*len(words)))
	for _, word := range words {
		buf = binary.BigEndian.AppendUint32(buf, word)
	}
	_, err := w.Write(buf)
	return err
}

// readMux reads one packet and returns its leading uint32 words (a hello's
// extensions and any strings after them are not needed, only skipped).
func readMux(r io.Reader) ([]uint32, error) {
	var n uint32
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return nil, fmt.Errorf("read the master's packet: %w", err)
	}
	if n < 4 || n > 64<<10 {
		return nil, fmt.Errorf("the master's packet is %d bytes long", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("read the master's packet: %w", err)
	}
	words := make([]uint32, 0, 3)
	for i := 0; i+4 <= len(body) && len(words) < 3; i += 4 {
		words = append(words, binary.BigEndian.Uint32(body[i:]))
	}
	return words, nil
}

// unixConn is a blocking unix socket whose every read and write is bounded
// by socket timeouts set to what is left of a deadline. Not a net.Conn:
// the net package would link the C resolver into the binaries (see
// backends/tmux/wire), for one connection that needs none of it.
type unixConn struct {
	fd       int
	deadline time.Time
}

var errProbeTimeout = errors.New("the master did not answer in time")

// dialUnix connects to path without blocking (a wedged master's full
// backlog fails the connect at once), then returns the socket blocking.
func dialUnix(path string, deadline time.Time) (*unixConn, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("connect %s: %w", path, err)
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &unixConn{fd: fd, deadline: deadline}, nil
}

func (c *unixConn) arm(opt int) error {
	left := time.Until(c.deadline)
	if left <= 0 {
		return errProbeTimeout
	}
	tv := syscall.NsecToTimeval(max(left.Nanoseconds(), int64(time.Microsecond)))
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv)
}

func (c *unixConn) Read(b []byte) (int, error) {
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
		case err == syscall.EINTR, err == syscall.EAGAIN:
			continue // arm says when the deadline has passed
		}
		return 0, err
	}
}

func (c *unixConn) Write(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		if err := c.arm(syscall.SO_SNDTIMEO); err != nil {
			return written, err
		}
		n, err := syscall.Write(c.fd, b[written:])
		if n > 0 {
			written += n
		}
		if err != nil && err != syscall.EINTR && err != syscall.EAGAIN {
			return written, err
		}
	}
	return written, nil
}

func (c *unixConn) Close() error { return syscall.Close(c.fd) }
