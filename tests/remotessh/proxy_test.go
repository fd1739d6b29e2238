package remotessh

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// proxy forwards loopback TCP to a host's sshd, and can add latency or
// stop forwarding (a partition: bytes are held, not refused, as when a
// network path goes dark).
type proxy struct {
	l       net.Listener
	mu      sync.Mutex
	delay   time.Duration
	dark    bool
	healed  *sync.Cond
	backend string
}

func startProxy(t testing.TB, backend string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, backend: backend}
	p.healed = sync.NewCond(&p.mu)
	t.Cleanup(func() { l.Close(); p.set(0, false) })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			go p.pipe(c, s)
			go p.pipe(s, c)
		}
	}()
	return p
}

func (p *proxy) port() int { return p.l.Addr().(*net.TCPAddr).Port }

func (p *proxy) set(delay time.Duration, dark bool) {
	p.mu.Lock()
	p.delay, p.dark = delay, dark
	p.mu.Unlock()
	p.healed.Broadcast()
}

// pipe carries from's bytes to to, each chunk delivered delay after it was
// read, as a link's latency would: chunks read while earlier ones are in
// flight are not held behind their delays (a sleep a chunk would make a
// 1 KB answer in ten reads take ten delays). A dark path holds every
// chunk where it is.
func (p *proxy) pipe(from, to net.Conn) {
	type chunk struct {
		due  time.Time
		data []byte
	}
	line := make(chan chunk, 1024)
	go func() {
		defer to.Close()
		for c := range line {
			p.mu.Lock()
			for p.dark {
				p.healed.Wait()
			}
			p.mu.Unlock()
			time.Sleep(time.Until(c.due))
			if _, err := to.Write(c.data); err != nil {
				for range line { // let the reader finish
				}
				return
			}
		}
	}()
	defer close(line)
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			p.mu.Lock()
			delay := p.delay
			p.mu.Unlock()
			line <- chunk{due: time.Now().Add(delay), data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			return
		}
	}
}

// trustedProxy starts a proxy to h's sshd, whose host key the client
// trusts at the proxy's port too.
func (f *fleet) trustedProxy(h *host) *proxy {
	f.T.Helper()
	p := startProxy(f.T, fmt.Sprintf("127.0.0.1:%d", h.Port))
	hostPub, err := os.ReadFile(filepath.Join(h.Dir, "hostkey.pub"))
	if err != nil {
		f.T.Fatal(err)
	}
	appendFile(f.T, f.Known, fmt.Sprintf("[127.0.0.1]:%d %s", p.port(), hostPub))
	return p
}

// viaProxy names host h again as <name>, reached through a proxy.
func (f *fleet) viaProxy(h *host, name string) *proxy {
	f.T.Helper()
	p := f.trustedProxy(h)
	conf := readFile(f.SSHConfig)
	block := conf[strings.Index(conf, "Host "+h.Name+"\n"):]
	block = strings.Replace(block, "Host "+h.Name+"\n", "Host "+name+"\n", 1)
	block = strings.Replace(block, fmt.Sprintf("Port %d", h.Port), fmt.Sprintf("Port %d", p.port()), 1)
	appendFile(f.T, f.SSHConfig, block)
	appendFile(f.T, filepath.Join(f.Home, "config", "hosts.toml"), fmt.Sprintf("[hosts.%s]\nssh = %q\nhome = %q\nbin = %q\n", name, name, h.Home, h.Bin))
	return p
}

// Through 40 ms each way, every verb still works.
func TestAddedLatency(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	a := h.startAgent("t1")
	p := f.viaProxy(h, "slow")
	p.set(40*time.Millisecond, false)
	r := f.run(60*time.Second, nil, "fm-send", "slow/t1", "through the slow path")
	wantCode(t, r, 0, "send through latency")
	r = f.run(60*time.Second, nil, "fm-control", "status", "slow/t1")
	wantCode(t, r, 0, "status through latency")
	t.Logf("status through 40 ms each way, over the held master: %v", r.elapsed)
	if got := a.submits(); len(got) != 1 {
		t.Fatalf("the agent received %q", got)
	}
}

// A partition before a call: the hello never comes, exit 1, nothing sent,
// within twice the connect timeout. During a send whose message the host
// types: exit 3 at the deadline, naming the request, and once the path
// heals its retry is answered from memory, the message typed once.
func TestPartition(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	a := h.startAgent("t1")
	p := f.viaProxy(h, "far")
	// The master is made at the default connect timeout; the partitioned
	// calls then ride it with short bounds: a second for the hello (two
	// in all), eight for the send's answer.
	wantCode(t, f.run(30*time.Second, nil, "fm-control", "status", "far/t1"), 0, "status before the partition")
	fast := []string{"FM_SSH_CONNECT_TIMEOUT=1", "FM_REMOTE_TIMEOUT=8"}

	p.set(0, true)
	r := f.run(20*time.Second, fast, "fm-send", "far/t1", "never", "--json")
	wantCode(t, r, 1, "send across a partition")
	if !strings.Contains(r.stderr, `"code":"host-unreachable"`) || !strings.Contains(r.stderr, "nothing was sent") {
		t.Fatalf("want host-unreachable, nothing sent: %s", r)
	}
	p.set(0, false)

	release := h.holdSendLock("t1")
	send := f.start(30*time.Second, fast, "fm-send", "far/t1", "typed once", "--json")
	h.waitFor(15*time.Second, "the host's fm-send to wait for the lock", func() bool { return running("^fm-send --json=true t1 -- typed once$") })
	// Dark, then the lock released: the host types the message and its
	// answer is lost in the partition; this side gives up at its deadline.
	p.set(0, true)
	release()
	h.waitFor(30*time.Second, "the message typed", func() bool { return len(a.submits()) == 1 })
	r = <-send.done
	wantCode(t, r, 3, "send cut by a partition")
	var lost struct{ Code, Request string }
	if err := json.Unmarshal([]byte(r.stderr), &lost); err != nil || lost.Request == "" {
		t.Fatalf("want the request id: %v %s", err, r)
	}
	p.set(0, false)
	r = f.run(60*time.Second, []string{"FM_REQUEST_ID=" + lost.Request}, "fm-send", "far/t1", "typed once")
	wantCode(t, r, 0, "the retry after the partition")
	if !strings.Contains(r.stderr, "had already run") || len(a.submits()) != 1 {
		t.Fatalf("the retry typed again or did not say it replayed: %s; agent got %q", r, a.submits())
	}
}
