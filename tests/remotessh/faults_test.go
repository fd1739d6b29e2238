package remotessh

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fmctl/config"
	"fmctl/remote"
)

// A retry carrying the request id of a call that ran is answered from the
// host's memory: the message is not typed again.
func TestARetriedRequestIDSendsOnce(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	a := h.startAgent("t1")
	retry := []string{"FM_REQUEST_ID=req-retry-0001"}
	r := f.run(60*time.Second, retry, "fm-send", "h1/t1", "only once")
	wantCode(t, r, 0, "the first send")
	r = f.run(60*time.Second, retry, "fm-send", "h1/t1", "only once")
	wantCode(t, r, 0, "the retried send")
	if !strings.Contains(r.stderr, "request req-retry-0001 had already run") || !strings.Contains(r.stdout, "submit=confirmed") {
		t.Fatalf("the retry did not say it replayed the remembered outcome: %s", r)
	}
	if got := a.submits(); len(got) != 1 {
		t.Fatalf("the agent received %q, want one message", got)
	}
}

// A host whose fmctl speaks another protocol, or that has none where its
// entry says, is refused before anything is sent, saying so.
func TestMismatchedAndMissingBinariesAreRefusedBeforeSending(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	a := h.startAgent("t1")
	future := filepath.Join(h.Dir, "future-bin")
	if err := os.MkdirAll(future, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(future, "fm-control"), "#!/bin/sh\necho '{\"serve\":\"fmctl\",\"protocol\":99,\"version\":\"v9.9.9\"}'\ncat >/dev/null\n")
	if err := os.Chmod(filepath.Join(future, "fm-control"), 0o755); err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(f.Home, "config", "hosts.toml"), "[hosts.future]\nssh = \"h1\"\nhome = \""+h.Home+"\"\nbin = \""+future+"\"\n\n[hosts.bare]\nssh = \"h1\"\nhome = \""+h.Home+"\"\nbin = \"/nonexistent/fmctl/bin\"\n")

	r := f.run(30*time.Second, nil, "fm-send", "future/t1", "hello", "--json")
	wantCode(t, r, 1, "a protocol 99 host")
	if !strings.Contains(r.stderr, `"code":"protocol-mismatch"`) || !strings.Contains(r.stderr, "v9.9.9 speaks protocol 99") || !strings.Contains(r.stderr, "speaks 1") {
		t.Fatalf("the mismatch does not name both versions: %s", r)
	}
	r = f.run(30*time.Second, nil, "fm-send", "bare/t1", "hello", "--json")
	wantCode(t, r, 1, "a host without the binaries")
	if !strings.Contains(r.stderr, `"code":"no-remote-binaries"`) || !strings.Contains(r.stderr, "nothing was sent") {
		t.Fatalf("want no-remote-binaries, nothing sent: %s", r)
	}
	r = f.run(30*time.Second, nil, "fm-control", "hosts", "check", "bare")
	wantCode(t, r, 1, "hosts check bare")
	r = f.run(30*time.Second, nil, "fm-control", "hosts", "check", "h1")
	wantCode(t, r, 0, "hosts check h1")
	if !strings.HasPrefix(r.stdout, "host-ok h1 ") || !strings.Contains(r.stdout, "protocol=1") {
		t.Fatalf("hosts check h1: %s", r)
	}
	if got := a.submits(); len(got) != 0 {
		t.Fatalf("the agent received %q, want nothing", got)
	}
}

// masterPID is the pid of the host's ssh master, from ssh -O check.
func (f *fleet) masterPID(h *host) (int, string) {
	f.T.Helper()
	path := remote.SSH{ControlDir: filepath.Join(f.Runtime, "fmctl-ssh"), ConfigFile: f.SSHConfig}.ControlPath(config.Host{Name: h.Name, SSH: h.Name})
	out, _ := exec.Command("ssh", "-F", f.SSHConfig, "-o", "ControlPath="+path, "-O", "check", h.Name).CombinedOutput()
	m := regexp.MustCompile(`pid=(\d+)`).FindSubmatch(out)
	if m == nil {
		f.T.Fatalf("no master for %s: %s", h.Name, out)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	return pid, path
}

// A master that wedged (stopped) or died (killed, its socket left behind)
// is replaced within the probe's bound; the call never hangs on it.
func TestAStaleMasterIsReplacedNotHungOn(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	h.startAgent("t1")
	wantCode(t, f.run(30*time.Second, nil, "fm-control", "status", "h1/t1"), 0, "status over a new master")

	pid, path := f.masterPID(h)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	r := f.run(20*time.Second, nil, "fm-control", "status", "h1/t1")
	wantCode(t, r, 0, "status past a wedged master")
	t.Logf("status past a wedged master: %v", r.elapsed)
	if r.elapsed > 10*time.Second {
		t.Fatalf("status past a wedged master took %v", r.elapsed)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)

	pid, _ = f.masterPID(h)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the killed master's socket is not there to be stale: %v", err)
	}
	r = f.run(20*time.Second, nil, "fm-control", "status", "h1/t1")
	wantCode(t, r, 0, "status past a killed master's socket")
	t.Logf("status past a killed master's socket: %v", r.elapsed)
}

func waitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d outlived SIGKILL", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// background is a local binary started in the background.
type background struct {
	done chan result
}

func (f *fleet) start(limit time.Duration, extraEnv []string, bin string, args ...string) background {
	r := background{done: make(chan result, 1)}
	go func() { r.done <- f.run(limit, extraEnv, bin, args...) }()
	return r
}

// sshd killed while a read waits: exit 1, the host stopped answering; while
// a message is being typed: exit 3, unconfirmed, naming the request, which
// a retry with that id answers from memory once the host is back, having
// typed the message once.
func TestSSHDKilledMidCall(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	a := h.startAgent("t1")

	wait := f.start(60*time.Second, nil, "fm-control", "wait", "h1/t1", "--for", "dead", "--timeout", "30")
	h.waitFor(15*time.Second, "the remote wait to run", func() bool { return running("^fm-control wait --for=dead --timeout=30 t1$") })
	h.KillSSHD()
	r := <-wait.done
	wantCode(t, r, 1, "wait with sshd killed")
	if !strings.Contains(r.stderr, "the verb changes nothing, so ask again") {
		t.Fatalf("want a lost read, exit 1: %s", r)
	}

	// The task's input lock, held here, keeps the host's fm-send waiting
	// (as behind another delivery) while sshd dies; released, it types.
	release := h.holdSendLock("t1")
	h.StartSSHD()
	send := f.start(60*time.Second, nil, "fm-send", "h1/t1", "typed once", "--json")
	h.waitFor(15*time.Second, "the host's fm-send to wait for the lock", func() bool { return running("^fm-send --json=true t1 -- typed once$") })
	h.KillSSHD()
	r = <-send.done
	wantCode(t, r, 3, "send with sshd killed")
	var lost struct {
		Code, Request string
	}
	if err := json.Unmarshal([]byte(r.stderr), &lost); err != nil || lost.Code != "unconfirmed" || lost.Request == "" {
		t.Fatalf("want unconfirmed with the request id: %v %s", err, r)
	}
	release()
	h.waitFor(30*time.Second, "the message typed by the orphaned fm-send", func() bool { return len(a.submits()) == 1 })

	h.StartSSHD()
	r = f.run(60*time.Second, []string{"FM_REQUEST_ID=" + lost.Request}, "fm-send", "h1/t1", "typed once")
	wantCode(t, r, 0, "the retry")
	if !strings.Contains(r.stderr, "had already run") {
		t.Fatalf("the retry was not answered from memory: %s", r)
	}
	if got := a.submits(); len(got) != 1 {
		t.Fatalf("the agent received %q, want the message once", got)
	}
}

// holdSendLock takes task id's input lock on h, as another delivery
// would: the host's fm-send waits for it, typing nothing. It returns the
// lock's release (also made at the test's end).
func (h *host) holdSendLock(id string) (release func()) {
	h.T.Helper()
	lock, err := os.OpenFile(filepath.Join(h.Home, "state", ".send-"+id+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() { lock.Close() })
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		h.T.Fatal(err)
	}
	return func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }
}

// running reports whether a process's command line matches pattern (a
// verb the serve runs is argv[0] fm-control, its flags as --name=value,
// unlike the local command line).
func running(pattern string) bool {
	out, _ := exec.Command("pgrep", "-f", pattern).Output()
	return len(strings.TrimSpace(string(out))) > 0
}

// A host allowing two sessions per connection (MaxSessions 2): sshd refuses
// the sessions past the second over the one master ("no more sessions"),
// before any request, and ssh itself (ControlMaster=auto) then makes a
// connection of their own: every call runs, none hangs.
func TestMaxSessionsPastTheLimitStillRun(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1", "MaxSessions 2")
	h.startAgent("t1")
	wantCode(t, f.run(30*time.Second, nil, "fm-control", "status", "h1/t1"), 0, "status over a new master")
	var waits []background
	for range 4 {
		waits = append(waits, f.start(30*time.Second, nil, "fm-control", "wait", "h1/t1", "--for", "dead", "--timeout", "3"))
	}
	codes := map[int]int{}
	for _, w := range waits {
		r := <-w.done
		codes[r.code]++
		if r.code != 4 {
			t.Errorf("want each wait to run to its timeout (exit 4): %s", r)
		}
	}
	t.Logf("exit codes of 4 concurrent waits: %v", codes)
	if !strings.Contains(readFile(filepath.Join(h.Dir, "sshd.log")), "no more sessions") {
		t.Fatalf("sshd refused no session past MaxSessions 2, so the limit was not met:\n%s", readFile(filepath.Join(h.Dir, "sshd.log")))
	}
}
