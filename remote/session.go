package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"fmctl/backends"
	"fmctl/config"
	"fmctl/phrase"
)

// Session is one `fm-control serve` on a host, held for as many requests
// as the caller makes, so the remote login shell is paid for once.
type Session struct {
	Host  config.Host
	Hello Hello

	cmd          *exec.Cmd
	in           io.WriteCloser
	lines        chan line
	stderr       *tail
	exited       chan struct{}
	localVersion string
	mu           sync.Mutex // one request at a time: the lines are not tagged for interleaving
	pings        int
}

type line struct {
	data []byte
	err  error
}

// ServeCommand is the remote command line that starts the serve.
func ServeCommand(h config.Host) []string {
	return []string{strings.TrimSuffix(h.RemoteBin(), "/") + "/fm-control", "serve", "--home", h.Home}
}

// maxPreamble bounds the lines a remote login shell may print before the
// hello (an rc file's greeting): they are skipped, not taken as a protocol.
const maxPreamble = 64

// Open starts a session on h: the control socket checked (a stale one
// replaced), ssh started over the multiplexed connection, and the hello
// read and checked within wait. Every failure here is before any request,
// so nothing was sent.
func (s SSH) Open(ctx context.Context, h config.Host, wait time.Duration) (*Session, error) {
	unreachable := func(format string, args ...any) *Error {
		return &Error{Kind: ErrUnreachable, Host: h.Name, Msg: fmt.Sprintf(format, args...)}
	}
	if err := s.PrepareControlDir(); err != nil {
		return nil, unreachable("%v", err)
	}
	if _, err := s.ReplaceStaleMaster(ctx, h); err != nil {
		return nil, unreachable("%v", err)
	}
	// Its own process group (backends.Cmd.Command): a deadline kills ssh
	// and nothing else, a Ctrl-C at the terminal reaches fmctl, which
	// decides, not ssh, and a master ssh forks to persist may hold the
	// stderr pipe open without the session waiting on it. The session
	// outlives ctx: kill ends it.
	cmd := backends.Cmd{Path: s.bin(), Args: s.CommandArgs(h, ServeCommand(h)...)}.Command(context.Background())
	sess := &Session{Host: h, cmd: cmd, lines: make(chan line, 1), stderr: &tail{}, exited: make(chan struct{}), localVersion: s.LocalVersion}
	cmd.Stderr = sess.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, unreachable("ssh to %s: %v", h.Name, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, unreachable("ssh to %s: %v", h.Name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, unreachable("start ssh for host %s: %v", h.Name, err)
	}
	sess.in = in
	go sess.readLines(out)
	go func() { _ = cmd.Wait(); close(sess.exited) }()
	if err := sess.handshake(ctx, wait); err != nil {
		sess.kill()
		return nil, err
	}
	return sess, nil
}

func (s *Session) readLines(out io.Reader) {
	r := bufio.NewReaderSize(out, 64<<10)
	for {
		var buf []byte
		for {
			chunk, isPrefix, err := r.ReadLine()
			buf = append(buf, chunk...)
			if err != nil {
				s.lines <- line{err: err}
				close(s.lines)
				return
			}
			if len(buf) > MaxLine {
				s.lines <- line{err: fmt.Errorf("a line from the host is longer than %d bytes", MaxLine)}
				close(s.lines)
				return
			}
			if !isPrefix {
				break
			}
		}
		s.lines <- line{data: buf}
	}
}

// next is the next line, or why there is none by the deadline.
func (s *Session) next(ctx context.Context, deadline <-chan time.Time) ([]byte, error) {
	select {
	case l, ok := <-s.lines:
		if !ok {
			return nil, io.EOF
		}
		return l.data, l.err
	case <-deadline:
		return nil, context.DeadlineExceeded
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Session) handshake(ctx context.Context, wait time.Duration) error {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	h := s.Host
	for range maxPreamble {
		data, err := s.next(ctx, timer.C)
		if err != nil {
			return s.startFailure(err, wait)
		}
		var hello Hello
		if json.Unmarshal(data, &hello) != nil || hello.Serve != HelloServe {
			continue
		}
		if hello.Protocol != Protocol {
			return &Error{Kind: ErrMismatch, Host: h.Name, Msg: fmt.Sprintf("host %s's fmctl %s speaks protocol %d and this fmctl %s speaks %d; nothing was sent", h.Name, phrase.PrintableUpTo(hello.Version, hostLineMax), hello.Protocol, s.localVersion, Protocol)}
		}
		s.Hello = hello
		return nil
	}
	return &Error{Kind: ErrMismatch, Host: h.Name, Msg: fmt.Sprintf("host %s printed %d lines and no fmctl hello: %s is not fmctl's serve; nothing was sent", h.Name, maxPreamble, ServeCommand(h)[0])}
}

// startFailure explains a session that ended or timed out before its
// hello, from how ssh ended.
func (s *Session) startFailure(cause error, wait time.Duration) error {
	h := s.Host
	e := &Error{Kind: ErrUnreachable, Host: h.Name}
	if errors.Is(cause, context.DeadlineExceeded) {
		s.kill()
		e.Msg = fmt.Sprintf("host %s did not answer within %s; nothing was sent", h.Name, wait)
		e.Detail = s.stderr.last()
		return e
	}
	if errors.Is(cause, context.Canceled) {
		s.kill()
		e.Msg = fmt.Sprintf("interrupted before host %s answered; nothing was sent", h.Name)
		return e
	}
	select {
	case <-s.exited:
	case <-time.After(2 * time.Second):
		s.kill()
	}
	e.Detail = s.stderr.last()
	code := -1
	if s.cmd.ProcessState != nil {
		code = s.cmd.ProcessState.ExitCode()
	}
	switch code {
	case 126, 127:
		// The remote shell's "not found" / "not executable".
		e.Kind = ErrNoBinaries
		e.Msg = fmt.Sprintf("host %s has no runnable %s; nothing was sent", h.Name, ServeCommand(h)[0])
	case 255:
		e.Msg = fmt.Sprintf("ssh could not reach host %s (%s); nothing was sent", h.Name, h.SSH)
	default:
		e.Msg = fmt.Sprintf("host %s's fmctl ended (exit %d) before it answered; nothing was sent", h.Name, code)
	}
	return e
}

// Call sends req and reads its answer, by ctx's deadline. A failure before
// the request is written is ErrUnreachable; after, ErrLost, naming the
// request id.
func (s *Session) Call(ctx context.Context, req Request) (Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.Host
	req.Protocol = Protocol
	data, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("encode request: %w", err)
	}
	select {
	case <-s.exited:
		return Response{}, &Error{Kind: ErrUnreachable, Host: h.Name, Msg: fmt.Sprintf("host %s's session ended before the request; nothing was sent", h.Name), Detail: s.stderr.last()}
	default:
	}
	if err := ctx.Err(); err != nil {
		return Response{}, &Error{Kind: ErrUnreachable, Host: h.Name, Msg: fmt.Sprintf("%v before the request to host %s; nothing was sent", err, h.Name)}
	}
	lost := func(format string, args ...any) *Error {
		return &Error{Kind: ErrLost, Host: h.Name, Request: req.ID, Msg: fmt.Sprintf(format, args...), Detail: s.stderr.last()}
	}
	if _, err := s.in.Write(append(data, '\n')); err != nil {
		return Response{}, lost("the connection to host %s broke while request %s was being written: %v", h.Name, req.ID, err)
	}
	deadline, _ := ctx.Deadline()
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	got, err := s.next(ctx, timeout)
	if err != nil {
		s.kill()
		return Response{}, lost("no answer from host %s to request %s: %v", h.Name, req.ID, describe(err))
	}
	var resp Response
	if err := json.Unmarshal(got, &resp); err != nil || resp.ID != req.ID {
		s.kill()
		return Response{}, lost("host %s answered request %s with something else: %.80q", h.Name, req.ID, got)
	}
	return resp, nil
}

// errSessionEnded: the session's ssh or serve ended; a new one may be
// opened in its place, since nothing was sent on it.
var errSessionEnded = errors.New("the session ended")

// Alive reports whether the session's ssh still runs.
func (s *Session) Alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Ping proves the session answers before a request is sent on it: a
// request with no argv, which every serve answers without running
// anything (protocol.go). A held session may have died or lost its path
// since its last answer, and a request sent into that is lost, where a
// ping lost is not. It returns errSessionEnded when the session is gone,
// or the deadline's error when it did not answer within wait; either way
// the session is of no further use.
func (s *Session) Ping(ctx context.Context, wait time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pings++
	id := fmt.Sprintf("ping-%08d", s.pings)
	data, err := json.Marshal(Request{Protocol: Protocol, ID: id})
	if err != nil {
		return fmt.Errorf("encode ping: %w", err)
	}
	if !s.Alive() {
		return errSessionEnded
	}
	if _, err := s.in.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("%w: %v", errSessionEnded, err)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	got, err := s.next(ctx, timer.C)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return err
	case err != nil:
		return fmt.Errorf("%w: %v", errSessionEnded, err)
	}
	var resp Response
	if err := json.Unmarshal(got, &resp); err != nil || resp.ID != id {
		return fmt.Errorf("%w: the ping was answered with something else: %.80q", errSessionEnded, got)
	}
	return nil
}

func describe(err error) string {
	switch {
	case errors.Is(err, io.EOF):
		return "the connection closed"
	case errors.Is(err, context.DeadlineExceeded):
		return "the deadline passed"
	case errors.Is(err, context.Canceled):
		return "interrupted"
	}
	return err.Error()
}

// Close ends the session: the serve reads the end of its input and exits.
func (s *Session) Close() {
	_ = s.in.Close()
	select {
	case <-s.exited:
	case <-time.After(2 * time.Second):
		s.kill()
	}
}

func (s *Session) kill() {
	if p := s.cmd.Process; p != nil {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
}

// tail keeps the last few KiB ssh wrote on its stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

// hostLineMax bounds what a message echoes of a line the host wrote: ssh's
// or the remote fmctl's last line is the whole diagnosis, so it keeps more
// than an echoed word does.
const hostLineMax = 200

// last is its last non-empty line, made printable.
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.buf), []byte("\n"))
	return phrase.PrintableUpTo(string(bytes.TrimSpace(lines[len(lines)-1])), hostLineMax)
}
