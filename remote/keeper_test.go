package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fmctl/config"
)

// countingServe is echoServe that first appends a line to file, so a test
// counts the serves started; with once it answers one request (a ping
// included) and exits, as a serve that died would.
func countingServe(file string, once bool) string {
	loop := "while read -r line; do"
	if once {
		loop = "for _ in 1; do read -r line"
	}
	return `echo started >> '` + file + `'
echo '{"serve":"fmctl","protocol":1,"version":"v-remote","arch":"linux/amd64"}'
` + loop + `
	id=$(printf '%s' "$line" | sed 's/.*"request":"\([^"]*\)".*/\1/')
	printf '{"request":"%s","exit":0,"stdout":"ok\\n","stderr":""}\n' "$id"
done
`
}

// keeperRig is a keeper for one fake host, run in this process by the
// first caller that finds none, as fm-control hosts keep would be.
type keeperRig struct {
	t      *testing.T
	ssh    SSH
	host   config.Host
	path   string
	idle   time.Duration
	starts atomic.Int32
	mu     sync.Mutex
	runs   []chan error // each started keeper's Run result
}

func newKeeperRig(t *testing.T, serve string, idle time.Duration) *keeperRig {
	s := testSSH(t, "exit 0")
	h := serveHost(t, serve)
	return &keeperRig{t: t, ssh: s, host: h, path: s.KeeperPath(h, "test-build"), idle: idle}
}

func (r *keeperRig) start() (<-chan struct{}, error) {
	r.starts.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	done, exited := make(chan error, 1), make(chan struct{})
	k := &Keeper{SSH: r.ssh, Host: r.host, Path: r.path, Idle: r.idle}
	go func() {
		done <- k.Run(ctx)
		close(exited)
	}()
	r.t.Cleanup(func() {
		cancel()
		<-exited
	})
	r.mu.Lock()
	r.runs = append(r.runs, done)
	r.mu.Unlock()
	return exited, nil
}

// kept is a caller's Kept, closed at the test's end.
func (r *keeperRig) kept() *Kept {
	k := &Kept{SSH: r.ssh, Host: r.host, Path: r.path, Wait: 5 * time.Second, Start: r.start}
	r.t.Cleanup(k.Close)
	return k
}

func call(t *testing.T, k *Kept, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := k.Call(ctx, Request{ID: id, Argv: []string{"fm-control", "status", "t1"}})
	if err != nil || resp.ID != id || resp.Stdout != "ok\n" {
		t.Fatalf("Call(%s) = %+v, %v", id, resp, err)
	}
}

func lines(path string) int {
	data, _ := os.ReadFile(path)
	return strings.Count(string(data), "\n")
}

// One keeper, started by the first call, answers every later caller over
// one serve; its socket is this user's only, in the private control dir.
func TestKeeperHoldsOneServeAcrossCallers(t *testing.T) {
	count := filepath.Join(t.TempDir(), "starts")
	r := newKeeperRig(t, countingServe(count, false), time.Minute)
	for i, id := range []string{"req-00001", "req-00002", "req-00003"} {
		k := r.kept()
		call(t, k, id)
		if k.Fallback() != nil {
			t.Fatalf("call %d went around the keeper: %v", i, k.Fallback())
		}
		k.Close()
	}
	if n := r.starts.Load(); n != 1 {
		t.Fatalf("%d keepers started, want one", n)
	}
	if n := lines(count); n != 1 {
		t.Fatalf("%d serves started for three callers, want one", n)
	}
	info, err := os.Lstat(r.path)
	if err != nil || info.Mode()&fs.ModeSocket == 0 || info.Mode().Perm() != 0o600 {
		t.Fatalf("keeper socket %s: %v, %v; want a socket, mode 0600", r.path, info.Mode(), err)
	}
	if dir, _ := os.Stat(r.ssh.ControlDir); dir.Mode().Perm() != 0o700 {
		t.Fatalf("control dir mode %v, want 0700", dir.Mode().Perm())
	}
	st, up := KeeperStatus(r.path, time.Second)
	if !up || st.PID != os.Getpid() || st.Started != 1 || st.Idle != 1 {
		t.Fatalf("keeper status %+v, %v; want up, one serve started and held", st, up)
	}
}

// A keeper answers only its own user, by SO_PEERCRED: anyone else is
// hung up on before its hello.
func TestKeeperRefusesAnotherUser(t *testing.T) {
	r := newKeeperRig(t, echoServe, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k := &Keeper{SSH: r.ssh, Host: r.host, Path: r.path, Idle: time.Minute, UID: os.Getuid() + 4242}
	go func() { _ = k.Run(ctx) }()
	waitFor(t, "the keeper to listen", func() bool { _, err := os.Lstat(r.path); return err == nil })
	if _, err := dialKeeper(r.path, time.Now().Add(time.Second)); err == nil {
		t.Fatal("a keeper for another user said hello to this one")
	}
}

// A keeper's socket left by a dead keeper (no listener), or held by one
// that never answers, is replaced within the probe's bound; a symlink
// there is never followed.
func TestAStaleKeeperSocketIsReplaced(t *testing.T) {
	for name, setup := range map[string]func(t *testing.T, path string){
		"dead":   leaveSocket,
		"wedged": wedgedSocket,
		"symlink": func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "elsewhere")
			leaveSocket(t, target)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if _, err := os.Lstat(target); err != nil {
					t.Errorf("the symlink's target was touched: %v", err)
				}
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := newKeeperRig(t, echoServe, time.Minute)
			if err := r.ssh.PrepareControlDir(); err != nil {
				t.Fatal(err)
			}
			setup(t, r.path)
			start := time.Now()
			k := r.kept()
			call(t, k, "req-stale-1")
			if k.Fallback() != nil || r.starts.Load() != 1 {
				t.Fatalf("the stale socket was not replaced by a keeper: fallback %v, %d started", k.Fallback(), r.starts.Load())
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("replacing a %s keeper socket took %v, past the 300ms probe", name, took)
			}
		})
	}
}

// Callers that find no keeper at once start one between them.
func TestConcurrentFirstCallersStartOneKeeper(t *testing.T) {
	count := filepath.Join(t.TempDir(), "starts")
	r := newKeeperRig(t, countingServe(count, false), time.Minute)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { call(t, r.kept(), "req-first-"+string(rune('a'+i))+"0") })
	}
	wg.Wait()
	if n := r.starts.Load(); n != 1 {
		t.Fatalf("%d keepers started by 8 concurrent first callers, want one", n)
	}
}

// A held serve that died is found dead by its ping, before anything is
// sent, and a new one started in its place.
func TestKeeperRestartsADeadServe(t *testing.T) {
	count := filepath.Join(t.TempDir(), "starts")
	r := newKeeperRig(t, countingServe(count, true), time.Minute)
	// Each serve answers one line: the first call's request; the second
	// call's ping finds it gone.
	for _, id := range []string{"req-dead-01", "req-dead-02"} {
		call(t, r.kept(), id)
	}
	if n := lines(count); n != 2 {
		t.Fatalf("%d serves started, want a second after the first died", n)
	}
	if n := r.starts.Load(); n != 1 {
		t.Fatalf("%d keepers, want the one", n)
	}
}

// A serve that dies with the request in hand: the keeper's caller gets
// ErrLost naming the request, never "nothing was sent".
func TestKeeperReportsALostAnswer(t *testing.T) {
	// The serve answers two lines (the first call's request, the second
	// call's ping) and dies with the third, the second call's request.
	r := newKeeperRig(t, `echo '{"serve":"fmctl","protocol":1,"version":"v"}'
for _ in 1 2; do
	read -r line
	printf '{"request":"%s","stdout":"ok\\n"}\n' "$(printf '%s' "$line" | sed 's/.*"request":"\([^"]*\)".*/\1/')"
done
read -r line; exit 0`, time.Minute)
	call(t, r.kept(), "req-warm-01")
	_, err := r.kept().Call(context.Background(), Request{ID: "req-lost-01", Argv: []string{"fm-send", "t1", "--", "hi"}})
	var re *Error
	if !errors.As(err, &re) || !re.Sent() || re.Request != "req-lost-01" {
		t.Fatalf("a serve dead mid-request: %v, want ErrLost naming the request", err)
	}
}

// A keeper that ends before the caller's "go" has sent nothing: the
// caller goes on with a session of its own. One that ends after has
// perhaps sent it: ErrLost, never a second send.
func TestAKeeperEndingSaysWhetherItSent(t *testing.T) {
	for name, ack := range map[string]bool{"before go": false, "after go": true} {
		t.Run(name, func(t *testing.T) {
			count := filepath.Join(t.TempDir(), "starts")
			r := newKeeperRig(t, countingServe(count, false), time.Minute)
			if err := r.ssh.PrepareControlDir(); err != nil {
				t.Fatal(err)
			}
			fakeKeeper(t, r.path, ack)
			k := r.kept()
			k.Start = nil // the fake is the keeper there
			resp, err := k.Call(context.Background(), Request{ID: "req-end-001", Argv: []string{"fm-send", "t1", "--", "hi"}})
			if !ack {
				if err != nil || resp.Stdout != "ok\n" || k.Fallback() == nil || lines(count) != 1 {
					t.Fatalf("want the call run by a session of the caller's own: %+v, %v, fallback %v", resp, err, k.Fallback())
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) || !re.Sent() || re.Request != "req-end-001" || lines(count) != 0 {
				t.Fatalf("want ErrLost naming the request and nothing run again: %v (%d serves)", err, lines(count))
			}
		})
	}
}

// A caller interrupted while the keeper starts a serve never says "go":
// nothing is sent, and it says so.
func TestACallerInterruptedBeforeGoSendsNothing(t *testing.T) {
	got := filepath.Join(t.TempDir(), "got")
	r := newKeeperRig(t, `sleep 1
echo '{"serve":"fmctl","protocol":1,"version":"v"}'
while read -r line; do echo "$line" >> '`+got+`'; done`, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err := r.kept().Call(ctx, Request{ID: "req-intr-01", Argv: []string{"fm-send", "t1", "--", "hi"}})
	var re *Error
	if !errors.As(err, &re) || re.Sent() || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("an interrupted call: %v, want nothing sent", err)
	}
	time.Sleep(2 * time.Second) // the serve up, and idle
	if data, _ := os.ReadFile(got); strings.Contains(string(data), "req-intr-01") {
		t.Fatalf("the serve received the interrupted request: %s", data)
	}
}

// fakeKeeper listens at path, says hello, reads one request, and if ack
// says ready and reads the caller's go; then hangs up.
func fakeKeeper(t *testing.T, path string, ack bool) {
	l, _, err := listenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			enc := json.NewEncoder(c)
			_ = enc.Encode(KeeperInfo{Keeper: HelloServe, Protocol: keeperProtocol, PID: 1})
			r := bufio.NewReader(c)
			if _, err := ReadLine(r); err == nil && ack {
				_ = enc.Encode(keeperReply{Ready: true})
				_ = readGo(r)
			}
			c.Close()
		}
	}()
}

// An idle keeper exits, its socket gone and its serve ended; one whose
// socket was removed exits too.
func TestKeeperExitsWhenIdleOrItsSocketIsGone(t *testing.T) {
	r := newKeeperRig(t, echoServe, 200*time.Millisecond)
	k := r.kept()
	call(t, k, "req-idle-01")
	k.Close()
	select {
	case err := <-r.runs[0]:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the keeper outlived its idle period")
	}
	if _, err := os.Lstat(r.path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the idle keeper left its socket: %v", err)
	}

	r = newKeeperRig(t, echoServe, time.Minute)
	call(t, r.kept(), "req-gone-01")
	if err := os.Remove(r.path); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.runs[0]:
	case <-time.After(5 * time.Second):
		t.Fatal("the keeper outlived its socket")
	}
}

// StopKeeper stops a keeper, and says when there was none.
func TestStopKeeper(t *testing.T) {
	r := newKeeperRig(t, echoServe, time.Minute)
	call(t, r.kept(), "req-stop-01")
	if pid, err := StopKeeper(r.path, 5*time.Second); err != nil || pid != os.Getpid() {
		t.Fatalf("StopKeeper = %d, %v", pid, err)
	}
	select {
	case <-r.runs[0]:
	case <-time.After(5 * time.Second):
		t.Fatal("the keeper did not stop")
	}
	if pid, err := StopKeeper(r.path, time.Second); err != nil || pid != 0 {
		t.Fatalf("StopKeeper with none there = %d, %v", pid, err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
