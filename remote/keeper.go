package remote

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"fmctl/config"
)

// A keeper holds a host's `fm-control serve` across invocations, as ssh's
// ControlMaster holds its connection: one local process per host,
// listening on a unix socket in the private control directory, which every
// fm-* on this machine asks instead of starting a serve (and paying the
// host's login shell) of its own. It is started by the first caller that
// finds none, restarts the serve when it died, and exits after an idle
// period. It decides nothing: it carries requests and says, when one
// fails, whether it was sent.

// keeperProtocol is the version of the lines between a caller and its
// keeper. The socket's name carries the build, so a caller meets only a
// keeper of its own build; the number guards the rest.
const keeperProtocol = 1

// KeeperInfo is the first line a keeper writes to a caller: who it is and
// what it holds.
type KeeperInfo struct {
	Keeper   string `json:"keeper"` // always HelloServe
	Protocol int    `json:"protocol"`
	PID      int    `json:"pid"`
	Host     string `json:"host"`
	// Started counts the serves this keeper started on the host (one,
	// while the one it holds lives); Idle is how many it holds between
	// calls, Calls how many calls it is carrying now.
	Started int `json:"serves_started"`
	Idle    int `json:"serves_idle"`
	Calls   int `json:"calls"`
}

// keeperRequest is one line from a caller: a request to carry, or stop.
type keeperRequest struct {
	Op      string  `json:"op"` // "call", then "go"; or "stop"
	Request Request `json:"request"`
	// DeadlineMS is when the caller gives up (Unix milliseconds): the
	// keeper gives up on the answer then too.
	DeadlineMS int64 `json:"deadline_unix_ms"`
	// WaitMS bounds the hello of a new serve or the ping of a held one,
	// as the caller's FM_SSH_CONNECT_TIMEOUT says.
	WaitMS int64 `json:"wait_ms"`
}

// keeperReply is one line from the keeper. A call is answered with Ready,
// once a serve is proven to answer; the caller commits with "go", and only
// then is the request sent, and answered with a Response or an Error. A
// caller that did not write "go" knows nothing was sent; one that did may
// have had it sent. A call refused before Ready (no serve) is an Error
// alone: nothing was sent.
type keeperReply struct {
	Ready    bool       `json:"ready,omitempty"`
	Response *Response  `json:"response,omitempty"`
	Error    *wireError `json:"error,omitempty"`
	Stopped  bool       `json:"stopped,omitempty"`
}

// wireError is an *Error on the keeper's socket.
type wireError struct {
	Kind    string `json:"kind"`
	Msg     string `json:"msg"`
	Detail  string `json:"detail,omitempty"`
	Request string `json:"request,omitempty"`
}

var errorKinds = map[string]error{"unreachable": ErrUnreachable, "mismatch": ErrMismatch, "no-binaries": ErrNoBinaries, "lost": ErrLost}

func toWire(err error) *wireError {
	var e *Error
	if !errors.As(err, &e) {
		return &wireError{Kind: "unreachable", Msg: err.Error()}
	}
	for name, kind := range errorKinds {
		if errors.Is(e.Kind, kind) {
			return &wireError{Kind: name, Msg: e.Msg, Detail: e.Detail, Request: e.Request}
		}
	}
	return &wireError{Kind: "unreachable", Msg: e.Msg, Detail: e.Detail}
}

func (w *wireError) toError(host string) *Error {
	kind, ok := errorKinds[w.Kind]
	if !ok {
		// A kind this side does not know: nothing is claimed, so the
		// caller says it may have run.
		kind = ErrLost
	}
	return &Error{Kind: kind, Host: host, Request: w.Request, Msg: w.Msg, Detail: w.Detail}
}

// KeeperPath is host's keeper socket. Its name hashes the host's whole
// entry and build (this build's version and where its binaries are), so a
// changed entry or new binaries get a keeper of their own, and the old one
// idles out.
func (s SSH) KeeperPath(h config.Host, build string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("keeper %d\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s", keeperProtocol, h.Name, h.SSH, h.Home, h.RemoteBin(), s.ConfigFile, build)))
	return filepath.Join(s.ControlDir, fmt.Sprintf("k-%x", sum[:8]))
}

// maxIdleServes is how many idle serves a keeper holds: one serves a
// caller at a time, so concurrent callers get serves of their own, and
// past this many the extra ones are closed when their call ends.
const maxIdleServes = 2

// Keeper is the process holding one host's serves; Run serves its socket.
type Keeper struct {
	SSH  SSH
	Host config.Host
	Path string // its socket: SSH.KeeperPath
	// Idle is how long it stays up with no caller (FM_HOSTS_KEEP).
	Idle time.Duration
	// UID is the only user it answers; 0 is this process's own. (Only a
	// test names another.)
	UID int

	mu      sync.Mutex
	idle    []*Session
	inUse   map[*Session]bool
	busy    int // calls being carried
	started int
	conns   map[*net.UnixConn]bool
	last    time.Time // when the last caller left or request ended
	stop    chan struct{}
}

// Run listens on k.Path and serves callers until ctx ends, a caller asks
// it to stop, it has been idle for k.Idle, or its socket is no longer its
// own (removed, or replaced by another keeper).
func (k *Keeper) Run(ctx context.Context) error {
	if err := k.SSH.PrepareControlDir(); err != nil {
		return err
	}
	uid := k.UID
	if uid == 0 {
		uid = os.Getuid()
	}
	l, self, err := listenUnix(k.Path)
	if err != nil {
		return fmt.Errorf("keeper for host %s: %w", k.Host.Name, err)
	}
	k.conns, k.inUse, k.last, k.stop = map[*net.UnixConn]bool{}, map[*Session]bool{}, time.Now(), make(chan struct{})
	accepted, done := make(chan *net.UnixConn), make(chan struct{})
	defer close(done)
	go func() {
		defer close(accepted)
		for {
			c, err := l.AcceptUnix()
			if err != nil {
				return
			}
			select {
			case accepted <- c:
			case <-done:
				c.Close()
				return
			}
		}
	}()
	tick := time.NewTicker(min(max(k.Idle/4, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	defer k.shutdown(l, self)
	for {
		select {
		case c, ok := <-accepted:
			if !ok {
				return nil
			}
			if !k.admit(c, uid) {
				continue
			}
			go k.serveConn(ctx, c)
		case <-tick.C:
			if id, err := idOf(k.Path); err != nil || id != self {
				return nil
			}
			if k.idleFor() >= k.Idle {
				return nil
			}
		case <-k.stop:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// admit checks who connected: only this user, by the kernel's word.
func (k *Keeper) admit(c *net.UnixConn, uid int) bool {
	cred, err := peerCred(c)
	if err != nil || int(cred.Uid) != uid {
		c.Close()
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.conns[c] = true
	return true
}

func (k *Keeper) idleFor() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.conns) > 0 || k.busy > 0 {
		return 0
	}
	return time.Since(k.last)
}

// shutdown stops listening, removes the socket if it is still this
// keeper's, ends the held serves and drops every caller. A caller mid-call
// (only when stopped, never idle) reads the end of its connection after
// its "go": unconfirmed, as it must be; its serve is killed, and the verb
// runs on to its end on the host, which remembers its outcome.
func (k *Keeper) shutdown(l *net.UnixListener, self fileID) {
	// The lock callers take to start a keeper: none is starting one at
	// this path while it is removed.
	if release, err := flockFile(k.Path+".lock", time.Now().Add(time.Second)); err == nil {
		defer release()
	}
	if id, err := idOf(k.Path); err == nil && id == self {
		_ = os.Remove(k.Path)
	}
	l.Close()
	k.mu.Lock()
	idle := k.idle
	k.idle = nil
	for c := range k.conns {
		c.Close()
	}
	for s := range k.inUse {
		s.kill()
	}
	k.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range idle {
		wg.Go(s.Close)
	}
	wg.Wait()
}

func (k *Keeper) requestStop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	select {
	case <-k.stop:
	default:
		close(k.stop)
	}
}

func (k *Keeper) hello() KeeperInfo {
	k.mu.Lock()
	defer k.mu.Unlock()
	return KeeperInfo{Keeper: HelloServe, Protocol: keeperProtocol, PID: os.Getpid(), Host: k.Host.Name, Started: k.started, Idle: len(k.idle), Calls: k.busy}
}

// serveConn answers one caller's lines, in order.
func (k *Keeper) serveConn(ctx context.Context, c *net.UnixConn) {
	defer func() {
		k.mu.Lock()
		delete(k.conns, c)
		k.last = time.Now()
		k.mu.Unlock()
		c.Close()
	}()
	enc := json.NewEncoder(c)
	enc.SetEscapeHTML(false)
	// A caller that stops talking does not hold the keeper up forever.
	_ = c.SetWriteDeadline(time.Now().Add(k.Idle))
	if enc.Encode(k.hello()) != nil {
		return
	}
	r := bufio.NewReaderSize(c, 64<<10)
	for {
		_ = c.SetDeadline(time.Now().Add(k.Idle))
		data, err := ReadLine(r)
		if err != nil {
			return
		}
		var req keeperRequest
		if err := json.Unmarshal(data, &req); err != nil {
			_ = enc.Encode(keeperReply{Error: &wireError{Kind: "unreachable", Msg: fmt.Sprintf("the keeper for host %s could not read a request: %v; nothing was sent", k.Host.Name, err)}})
			return
		}
		switch req.Op {
		case "stop":
			_ = enc.Encode(keeperReply{Stopped: true})
			k.requestStop()
			return
		case "call":
			if !k.call(ctx, c, r, enc, req) {
				return
			}
		default:
			_ = enc.Encode(keeperReply{Error: &wireError{Kind: "unreachable", Msg: fmt.Sprintf("the keeper for host %s does not know %q; nothing was sent", k.Host.Name, req.Op)}})
			return
		}
	}
}

// goWait bounds the wait for a caller's "go", which it writes at once.
const goWait = 5 * time.Second

// call carries one request: a proven serve taken (or started), "ready"
// told, the caller's "go" read, the request sent, its answer relayed. It
// reports whether the caller is still there to read another.
func (k *Keeper) call(ctx context.Context, c *net.UnixConn, r *bufio.Reader, enc *json.Encoder, req keeperRequest) bool {
	deadline := time.UnixMilli(req.DeadlineMS)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	// No read while the call runs; the answer's write is bounded, so a
	// caller that stopped reading does not hold the keeper.
	_ = c.SetDeadline(time.Time{})
	_ = c.SetWriteDeadline(deadline.Add(5 * time.Second))
	k.mu.Lock()
	k.busy++
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.busy--
		k.last = time.Now()
		k.mu.Unlock()
	}()
	sess, err := k.take(ctx, time.Duration(req.WaitMS)*time.Millisecond)
	if err != nil {
		return enc.Encode(keeperReply{Error: toWire(err)}) == nil
	}
	// A caller that gave up meanwhile (a Ctrl-C, its deadline) says no
	// "go": nothing is sent, and the serve is as good as before.
	_ = c.SetReadDeadline(time.Now().Add(goWait))
	if enc.Encode(keeperReply{Ready: true}) != nil || !readGo(r) {
		k.put(sess)
		return false
	}
	_ = c.SetReadDeadline(time.Time{})
	resp, err := sess.Call(ctx, req.Request)
	if err != nil {
		k.discard(sess)
		return enc.Encode(keeperReply{Error: toWire(err)}) == nil
	}
	k.put(sess)
	return enc.Encode(keeperReply{Response: &resp}) == nil
}

func readGo(r *bufio.Reader) bool {
	line, err := ReadLine(r)
	var req keeperRequest
	return err == nil && json.Unmarshal(line, &req) == nil && req.Op == "go"
}

// take is a serve proven to answer: a held one that answers a ping, else a
// new one. A dead or wedged master is replaced first (its held serves with
// it), since a ping through it would wait the whole bound. A held serve
// that ended is replaced; one that does not answer within wait means the
// host does not, and nothing is sent.
func (k *Keeper) take(ctx context.Context, wait time.Duration) (*Session, error) {
	h := k.Host
	removed, err := k.SSH.ReplaceStaleMaster(ctx, h)
	if err != nil {
		return nil, &Error{Kind: ErrUnreachable, Host: h.Name, Msg: err.Error()}
	}
	if removed {
		k.dropIdle()
	}
	for {
		k.mu.Lock()
		var sess *Session
		if n := len(k.idle); n > 0 {
			sess, k.idle = k.idle[n-1], k.idle[:n-1]
		}
		k.mu.Unlock()
		if sess == nil {
			break
		}
		err := sess.Ping(ctx, wait)
		if err == nil {
			return k.use(sess), nil
		}
		sess.kill()
		if !errors.Is(err, errSessionEnded) {
			return nil, &Error{Kind: ErrUnreachable, Host: h.Name, Msg: fmt.Sprintf("host %s did not answer within %s; nothing was sent", h.Name, wait), Detail: sess.stderr.last()}
		}
	}
	sess, err := k.SSH.Open(ctx, h, wait)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.started++
	k.mu.Unlock()
	return k.use(sess), nil
}

func (k *Keeper) use(sess *Session) *Session {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.inUse[sess] = true
	return sess
}

// discard kills a serve whose call failed: its lines may be out of step.
func (k *Keeper) discard(sess *Session) {
	k.mu.Lock()
	delete(k.inUse, sess)
	k.mu.Unlock()
	sess.kill()
}

// put holds sess for the next caller, or closes it past maxIdleServes.
func (k *Keeper) put(sess *Session) {
	k.mu.Lock()
	delete(k.inUse, sess)
	if len(k.idle) < maxIdleServes && sess.Alive() {
		k.idle = append(k.idle, sess)
		k.mu.Unlock()
		return
	}
	k.mu.Unlock()
	go sess.Close()
}

func (k *Keeper) dropIdle() {
	k.mu.Lock()
	idle := k.idle
	k.idle = nil
	k.mu.Unlock()
	for _, s := range idle {
		s.kill()
	}
}

// ReadLine reads one line of at most MaxLine bytes.
func ReadLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		buf = append(buf, chunk...)
		if err != nil {
			return nil, err
		}
		if len(buf) > MaxLine {
			return nil, fmt.Errorf("a line is longer than %d bytes", MaxLine)
		}
		if !isPrefix {
			return buf, nil
		}
	}
}
