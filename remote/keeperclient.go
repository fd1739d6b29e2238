package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"fmctl/backends"
	"fmctl/config"
)

// errKeeperGone: the keeper's connection ended before the caller said
// "go", so nothing was sent; another keeper, or a session of the caller's own,
// may carry the request instead.
var errKeeperGone = errors.New("the keeper ended before it sent the request")

// answerGrace is how long past the call's deadline a caller waits for the
// keeper's own word on it (the keeper gives up at the deadline too).
const answerGrace = 2 * time.Second

// keeperConn is one caller's connection to a keeper.
type keeperConn struct {
	c    *net.UnixConn
	r    *bufio.Reader
	info KeeperInfo
}

// dialKeeper connects to the keeper at path (a socket, never through a
// symlink), checks it runs as this user, and reads its hello by deadline.
func dialKeeper(path string, deadline time.Time) (*keeperConn, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode()&fs.ModeSocket == 0 {
		return nil, fmt.Errorf("keeper socket %s is not a socket", path)
	}
	// A unix connect does not wait: it succeeds, or is refused (no
	// listener: a stale socket), or finds nothing there, or finds the
	// listener's backlog full (EAGAIN).
	d := net.Dialer{Deadline: deadline}
	nc, err := d.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	c := nc.(*net.UnixConn)
	kc := &keeperConn{c: c, r: bufio.NewReaderSize(c, 64<<10)}
	cred, err := peerCred(c)
	if err == nil && int(cred.Uid) != os.Getuid() {
		err = fmt.Errorf("keeper socket %s is held by user %d", path, cred.Uid)
	}
	if err == nil {
		_ = c.SetDeadline(deadline)
		err = kc.readHello()
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	return kc, nil
}

func (kc *keeperConn) readHello() error {
	line, err := ReadLine(kc.r)
	if err != nil {
		return fmt.Errorf("the keeper did not say hello: %w", err)
	}
	if err := json.Unmarshal(line, &kc.info); err != nil || kc.info.Keeper != HelloServe || kc.info.Protocol != keeperProtocol {
		return fmt.Errorf("the keeper's hello is not keeper protocol %d: %.80q", keeperProtocol, line)
	}
	return nil
}

func (kc *keeperConn) close() { kc.c.Close() }

func (kc *keeperConn) send(req keeperRequest, deadline time.Time) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	_ = kc.c.SetWriteDeadline(deadline)
	_, err = kc.c.Write(append(data, '\n'))
	return err
}

// call carries req through the keeper. Until this side writes "go" a
// failure is errKeeperGone, or ErrUnreachable when ctx ended it (nothing
// was sent either way); after, the keeper's own verdict, or ErrLost if
// the keeper ended or did not answer in time.
func (kc *keeperConn) call(ctx context.Context, host string, req Request, wait time.Duration) (Response, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(24 * time.Hour)
	}
	if err := ctx.Err(); err != nil {
		return Response{}, &Error{Kind: ErrUnreachable, Host: host, Msg: fmt.Sprintf("%v before the request to host %s; nothing was sent", err, host)}
	}
	if err := kc.send(keeperRequest{Op: "call", Request: req, DeadlineMS: deadline.UnixMilli(), WaitMS: wait.Milliseconds()}, time.Now().Add(wait)); err != nil {
		return Response{}, fmt.Errorf("%w: %v", errKeeperGone, err)
	}
	_ = kc.c.SetReadDeadline(deadline.Add(answerGrace))
	// A Ctrl-C here ends the wait at once; the keeper carries on.
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			_ = kc.c.SetReadDeadline(time.Now())
		}
	})
	defer stop()
	notSent := func() error {
		return &Error{Kind: ErrUnreachable, Host: host, Msg: fmt.Sprintf("%s before the request reached host %s; nothing was sent", describe(ctx.Err()), host)}
	}
	sent := false
	for {
		line, err := ReadLine(kc.r)
		var rep keeperReply
		if err == nil {
			err = json.Unmarshal(line, &rep)
		}
		switch {
		case err != nil && !sent && ctx.Err() != nil:
			return Response{}, notSent()
		case err != nil && !sent:
			return Response{}, fmt.Errorf("%w: %v", errKeeperGone, err)
		case err != nil:
			why := fmt.Sprintf("the keeper holding host %s's connection ended while request %s was in flight", host, req.ID)
			if ctx.Err() != nil {
				why = fmt.Sprintf("no answer from host %s to request %s: %s", host, req.ID, describe(ctx.Err()))
			}
			return Response{}, &Error{Kind: ErrLost, Host: host, Request: req.ID, Msg: why}
		case rep.Ready && ctx.Err() != nil:
			return Response{}, notSent()
		case rep.Ready:
			// The commitment: written, the request may be sent.
			if err := kc.send(keeperRequest{Op: "go"}, time.Now().Add(wait)); err != nil {
				return Response{}, fmt.Errorf("%w: %v", errKeeperGone, err)
			}
			sent = true
		case rep.Error != nil:
			return Response{}, rep.Error.toError(host)
		case rep.Response != nil:
			return *rep.Response, nil
		}
	}
}

// Kept carries one caller's requests to a host through the host's keeper,
// starting one when there is none; when no keeper can be had, through a
// session of its own, as before keepers.
type Kept struct {
	SSH  SSH
	Host config.Host
	Path string        // the keeper's socket: SSH.KeeperPath
	Wait time.Duration // a new serve's hello, a held serve's ping
	// Start starts the keeper, detached (StartDetached); exited is closed
	// if it ends.
	Start func() (exited <-chan struct{}, err error)

	mu     sync.Mutex
	conn   *keeperConn
	direct *Session
	// directWhy is why direct was opened: the keeper could not be had.
	directWhy error
	// fallback is directWhy when the last call went through direct.
	fallback error
}

// Fallback is why the last call did not go through a keeper, nil when it
// did: a caller says so, since its own session pays the remote login.
func (k *Kept) Fallback() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.fallback
}

// Call sends req (its id set) and reads its answer by ctx's deadline, as
// Session.Call does.
func (k *Kept) Call(ctx context.Context, req Request) (Response, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	req.Protocol = Protocol
	k.fallback = nil
	var why error
	// A keeper that ended before this side said "go" (its idle exit
	// raced this caller) is replaced once.
	for attempt := 0; attempt < 2 && k.direct == nil; attempt++ {
		if k.conn == nil {
			conn, err := k.SSH.keeper(ctx, k.Path, k.Start)
			if err != nil {
				why = err
				break
			}
			k.conn = conn
		}
		resp, err := k.conn.call(ctx, k.Host.Name, req, k.Wait)
		if err != nil {
			// Its lines may be out of step (an answer still to come).
			k.conn.close()
			k.conn = nil
		}
		if !errors.Is(err, errKeeperGone) {
			return resp, err
		}
		why = err
	}
	if k.direct == nil {
		sess, err := k.SSH.Open(ctx, k.Host, k.Wait)
		if err != nil {
			return Response{}, err
		}
		k.direct, k.directWhy = sess, why
	}
	k.fallback = k.directWhy
	return k.direct.Call(ctx, req)
}

// Close ends the connection to the keeper (which holds on), or the
// session of its own.
func (k *Kept) Close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.conn != nil {
		k.conn.close()
		k.conn = nil
	}
	if k.direct != nil {
		k.direct.Close()
		k.direct = nil
	}
}

// keeper connects to the keeper at path, or starts one: a missing or stale
// socket (no listener, or a keeper that does not say hello within
// ProbeTimeout) is removed and a keeper started, under a lock in the
// control directory so that concurrent first callers start one keeper
// between them. Every step is bounded by ProbeTimeout and ctx.
func (s SSH) keeper(ctx context.Context, path string, start func() (<-chan struct{}, error)) (*keeperConn, error) {
	if len(path)+16 > maxSocketPath {
		return nil, fmt.Errorf("keeper socket path %s is too long for a unix socket", path)
	}
	if err := s.PrepareControlDir(); err != nil {
		return nil, err
	}
	bound := func() time.Time {
		t := time.Now().Add(s.ProbeTimeout)
		if d, ok := ctx.Deadline(); ok && d.Before(t) {
			return d
		}
		return t
	}
	conn, err := dialKeeper(path, bound())
	switch {
	case err == nil:
		return conn, nil
	case errors.Is(err, syscall.EAGAIN):
		// Its backlog is full: a keeper is there, only busy.
		return nil, err
	}
	before, _ := idOf(path)
	release, err := flockFile(path+".lock", bound())
	if err != nil {
		return nil, err
	}
	defer release()
	if now, err := idOf(path); err == nil && now != before {
		// Another caller started one while this one waited for the lock.
		if conn, err := dialKeeper(path, bound()); err == nil {
			return conn, nil
		}
	}
	if err := removeIfSocket(path); err != nil {
		return nil, err
	}
	if start == nil {
		return nil, errors.New("no keeper, and none to start")
	}
	exited, err := start()
	if err != nil {
		return nil, fmt.Errorf("start a keeper: %w", err)
	}
	until := bound()
	for {
		if _, err := os.Lstat(path); err == nil {
			return dialKeeper(path, until)
		}
		select {
		case <-exited:
			return nil, errors.New("the keeper ended as it started")
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(until) {
			return nil, fmt.Errorf("the keeper did not listen within %s", s.ProbeTimeout)
		}
	}
}

// StartDetached starts bin as a process of its own, as a keeper must be:
// its own session (a terminal's signals do not reach it, and it outlives
// its starter), standard streams on /dev/null, no other descriptor
// inherited, in / (so it pins no directory). exited is closed if it ends
// while this process lives.
func StartDetached(bin string, args ...string) (<-chan struct{}, error) {
	cmd := backends.Cmd{Path: bin, Args: args}.Command(context.Background())
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	return exited, nil
}

// KeeperStatus is what the keeper at path says of itself, or false when
// none answers there within timeout.
func KeeperStatus(path string, timeout time.Duration) (KeeperInfo, bool) {
	conn, err := dialKeeper(path, time.Now().Add(timeout))
	if err != nil {
		return KeeperInfo{}, false
	}
	defer conn.close()
	return conn.info, true
}

// StopKeeper stops the keeper at path, waiting (within timeout) for its
// socket to go, and returns its pid; 0 when there was none. A stale socket
// is removed.
func StopKeeper(path string, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	conn, err := dialKeeper(path, deadline)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return 0, removeIfSocket(path)
	}
	if err != nil {
		return 0, err
	}
	defer conn.close()
	if err := conn.send(keeperRequest{Op: "stop"}, deadline); err != nil {
		return 0, fmt.Errorf("ask the keeper to stop: %w", err)
	}
	_ = conn.c.SetReadDeadline(deadline)
	line, err := ReadLine(conn.r)
	var rep keeperReply
	if err == nil {
		err = json.Unmarshal(line, &rep)
	}
	if err != nil || !rep.Stopped {
		return 0, fmt.Errorf("the keeper (pid %d) did not agree to stop: %v", conn.info.PID, err)
	}
	for time.Now().Before(deadline) {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return conn.info.PID, nil
}
