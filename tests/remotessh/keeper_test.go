package remotessh

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serves are the pids of the `fm-control serve` processes running for
// host h (its home names them).
func (h *host) serves() []int {
	out, _ := exec.Command("pgrep", "-f", "fm-control serve --home "+regexp.QuoteMeta(h.Home)+"$").Output()
	var pids []int
	for _, w := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(w); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// keeperOf is what hosts check says of h's keeper: up or down, its pid,
// and how many serves it has started.
func (f *fleet) keeperOf(h *host) (state string, pid, started int) {
	f.T.Helper()
	r := f.run(30*time.Second, nil, "fm-control", "hosts", "check", h.Name, "--json")
	wantCode(f.T, r, 0, "hosts check "+h.Name)
	var out struct {
		Keeper  string `json:"keeper"`
		PID     int    `json:"keeper_pid"`
		Started int    `json:"keeper_serves_started"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		f.T.Fatalf("hosts check --json: %v: %s", err, r)
	}
	return out.Keeper, out.PID, out.Started
}

// Two verbs one after the other, each its own invocation, are answered by
// one serve on the host, held by the keeper the first one started: the
// host's login shell is paid once.
func TestConsecutiveVerbsShareOneRemoteServe(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	a := h.startAgent("t1")
	wantCode(t, f.run(30*time.Second, nil, "fm-control", "status", "h1/t1"), 0, "the first status")
	first := h.serves()
	if len(first) != 1 {
		t.Fatalf("after one verb the host runs serves %v, want one held", first)
	}
	r := f.run(30*time.Second, nil, "fm-send", "h1/t1", "over the held serve")
	wantCode(t, r, 0, "a send after it")
	if strings.Contains(r.stderr, "no keeper") {
		t.Fatalf("a call through the keeper said it fell back: %s", r)
	}
	t.Logf("send over the held serve: %v", r.elapsed)
	r = f.run(30*time.Second, nil, "fm-control", "status", "h1/t1")
	wantCode(t, r, 0, "a status after it")
	t.Logf("status over the held serve: %v", r.elapsed)
	if now := h.serves(); len(now) != 1 || now[0] != first[0] {
		t.Fatalf("serves %v after three verbs, want the first one %v still", now, first)
	}
	if got := a.submits(); len(got) != 1 {
		t.Fatalf("the agent received %q, want the one message", got)
	}
	state, pid, started := f.keeperOf(h)
	if state != "up" || pid == 0 || started != 1 {
		t.Fatalf("keeper %s pid %d, %d serves started; want up, one serve for three verbs", state, pid, started)
	}

	// The held serve killed: the next verb finds it gone before sending
	// (its ping unanswered) and starts another, and runs.
	if err := syscall.Kill(first[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, first[0])
	wantCode(t, f.run(30*time.Second, nil, "fm-control", "status", "h1/t1"), 0, "status after the serve died")
	if now := h.serves(); len(now) != 1 || now[0] == first[0] {
		t.Fatalf("serves %v after the first died, want one new one", now)
	}
	if _, again, started := f.keeperOf(h); again != pid || started != 2 {
		t.Fatalf("keeper pid %d (was %d), %d serves started; want the same keeper, a second serve", again, pid, started)
	}

	// disconnect stops the keeper; its serve ends with it.
	r = f.run(30*time.Second, nil, "fm-control", "hosts", "disconnect", "h1")
	wantCode(t, r, 0, "hosts disconnect h1")
	if !strings.HasPrefix(r.stdout, "disconnected h1 keeper=stopped keeper_pid="+strconv.Itoa(pid)) || !strings.Contains(r.stdout, "master=closed") {
		t.Fatalf("disconnect said %s", r)
	}
	waitGone(t, pid)
	h.waitFor(10*time.Second, "the held serve to end", func() bool { return len(h.serves()) == 0 })
	if state, _, _ := f.keeperOf(h); state != "down" {
		t.Fatalf("after disconnect the keeper is %s", state)
	}
	r = f.run(30*time.Second, nil, "fm-control", "hosts", "disconnect", "h1")
	wantCode(t, r, 0, "a second disconnect")
	if !strings.HasPrefix(r.stdout, "disconnected h1 keeper=none") {
		t.Fatalf("a second disconnect said %s", r)
	}
}

// The keeper killed while the host types a message: the caller had been
// told the request was on its way, so it is exit 3, unconfirmed, naming
// the request; the host types it once, and the retry (through a new
// keeper, the dead one's socket replaced) is answered from memory.
func TestKeeperKilledMidCall(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	a := h.startAgent("t1")
	wantCode(t, f.run(30*time.Second, nil, "fm-control", "status", "h1/t1"), 0, "status: the keeper up")
	_, pid, _ := f.keeperOf(h)

	release := h.holdSendLock("t1")
	send := f.start(60*time.Second, nil, "fm-send", "h1/t1", "typed once", "--json")
	h.waitFor(15*time.Second, "the host's fm-send to wait for the lock", func() bool { return running("^fm-send --json=true t1 -- typed once$") })
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := <-send.done
	wantCode(t, r, 3, "send with its keeper killed")
	var lost struct{ Code, Request, Host string }
	if err := json.Unmarshal([]byte(r.stderr), &lost); err != nil || lost.Code != "unconfirmed" || lost.Request == "" || lost.Host != "h1" {
		t.Fatalf("want unconfirmed with the host and request id: %v %s", err, r)
	}
	if !strings.Contains(r.stderr, "keeper") {
		t.Fatalf("the error does not say the keeper ended: %s", r)
	}
	release()
	h.waitFor(30*time.Second, "the message typed by the orphaned serve", func() bool { return len(a.submits()) == 1 })

	r = f.run(60*time.Second, []string{"FM_REQUEST_ID=" + lost.Request}, "fm-send", "h1/t1", "typed once")
	wantCode(t, r, 0, "the retry")
	if !strings.Contains(r.stderr, "had already run") {
		t.Fatalf("the retry was not answered from memory: %s", r)
	}
	if got := a.submits(); len(got) != 1 {
		t.Fatalf("the agent received %q, want the message once", got)
	}
	if state, again, _ := f.keeperOf(h); state != "up" || again == pid {
		t.Fatalf("after the retry the keeper is %s pid %d; want a new one up (the killed was %d)", state, again, pid)
	}
}

// Callers started together, none finding a keeper, start one between
// them (the lock in the control directory), and every call runs.
func TestConcurrentFirstCallersStartOneKeeper(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	h.startAgent("t1")
	var calls []background
	for range 4 {
		calls = append(calls, f.start(30*time.Second, nil, "fm-control", "status", "h1/t1"))
	}
	for _, c := range calls {
		wantCode(t, <-c.done, 0, "a concurrent first status")
	}
	out, _ := exec.Command("pgrep", "-f", "fm-control hosts keep --socket "+regexp.QuoteMeta(f.Runtime)).Output()
	if pids := strings.Fields(string(out)); len(pids) != 1 {
		t.Fatalf("keepers running: %q, want one", pids)
	}
	if socks := f.KeeperSockets(); len(socks) != 1 {
		t.Fatalf("keeper sockets %q, want one", socks)
	}
}

// FM_HOSTS_KEEP=0: no keeper; each invocation starts and ends a serve of
// its own, as before keepers.
func TestNoKeeperWhenKeepIsZero(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	h.startAgent("t1")
	off := []string{"FM_HOSTS_KEEP=0"}
	wantCode(t, f.run(30*time.Second, off, "fm-control", "status", "h1/t1"), 0, "status without a keeper")
	if socks := f.KeeperSockets(); len(socks) != 0 {
		t.Fatalf("keeper sockets %q with FM_HOSTS_KEEP=0", socks)
	}
	h.waitFor(10*time.Second, "the invocation's serve to end", func() bool { return len(h.serves()) == 0 })
}
