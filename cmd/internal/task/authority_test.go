package task

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fmctl/cmd/internal/fault"
	"fmctl/config"
)

// parents is a fake process table: 30 -> 20 (t2's pane shell) -> 10 -> 1.
type parents map[int]int

func (p parents) ParentPID(pid int) (int, error) {
	if pp, ok := p[pid]; ok {
		return pp, nil
	}
	return 0, errors.New("no such process")
}

func gateFor(t *testing.T, self int) (Authority, string) {
	t.Helper()
	home := t.TempDir()
	st := filepath.Join(home, "state")
	if err := os.MkdirAll(st, 0o755); err != nil {
		t.Fatal(err)
	}
	for id, pid := range map[string]string{"t1": "11", "t2": "20"} {
		body := "window=s:fm-" + id + "\nworktree=/wt/" + id + "\ntmux_pane_pid=" + pid + "\n"
		if err := os.WriteFile(filepath.Join(st, id+".meta"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tun := config.DefaultTunables()
	tun.Home.Root = home
	at := time.Date(2026, 12, 3, 21, 0, 0, 0, time.UTC)
	return Authority{Tool: "fm-control", Tunables: tun, Procs: parents{30: 20, 20: 10, 10: 1, 40: 10}, Self: self,
		Now: func() time.Time { return at }}, st
}

func TestGuardRefusesBeforeTheVerbRunsAndAuditsIt(t *testing.T) {
	g, st := gateFor(t, 30)
	ran := false
	err := g.Guard("exit", "t1", func() error { ran = true; return nil })
	if ran || fault.CodeOf(err) != fault.ENotAuthorized || fault.ClassOf(err) != fault.ClassFailed {
		t.Fatalf("ran=%v err=%v (%s); want refused before the verb ran", ran, err, fault.CodeOf(err))
	}
	trail, _ := os.ReadFile(filepath.Join(st, "t1.audit"))
	want := "2026-12-03T21:00:00Z req="
	if !strings.HasPrefix(string(trail), want) || !strings.HasSuffix(string(trail), " caller=task:t2 pane_pid=20 pid="+strconv.Itoa(os.Getppid())+" verb=exit target=t1 outcome=refused code=not-authorized\n") {
		t.Errorf("t1's trail = %q", trail)
	}
	// A refused spawn of a task that does not exist is the caller's own.
	if err := g.Guard("spawn", "t9", func() error { ran = true; return nil }); ran || err == nil {
		t.Fatalf("spawn by a task: ran=%v err=%v", ran, err)
	}
	if trail, _ := os.ReadFile(filepath.Join(st, "t2.audit")); !strings.Contains(string(trail), "verb=spawn target=t9 outcome=refused") {
		t.Errorf("t2's trail = %q, want the refused spawn", trail)
	}
	if _, err := os.Lstat(filepath.Join(st, "t9.audit")); err == nil {
		t.Error("a trail was made for an id with no record")
	}
}

func TestGuardRunsAndAuditsTheOperatorsChangesOnly(t *testing.T) {
	g, st := gateFor(t, 40)
	cases := []struct {
		verb string
		err  error
		line string // "" = no line
	}{
		{"exit", nil, "caller=operator pid=" + strconv.Itoa(os.Getppid()) + " verb=exit target=t1 outcome=done"},
		{"interrupt", fault.Failed("no agent").Coded(fault.EAgentNotRunning), "verb=interrupt target=t1 outcome=failed code=agent-not-running"},
		{"relaunch", fault.Usage("needs --note"), ""},
		{"status", nil, ""},
	}
	for _, c := range cases {
		before, _ := os.ReadFile(filepath.Join(st, "t1.audit"))
		ran := false
		err := g.Guard(c.verb, "t1", func() error { ran = true; return c.err })
		if !ran || err != c.err {
			t.Fatalf("%s: ran=%v err=%v, want it run and its error returned", c.verb, ran, err)
		}
		after, _ := os.ReadFile(filepath.Join(st, "t1.audit"))
		added := strings.TrimPrefix(string(after), string(before))
		if (c.line == "") != (added == "") || !strings.Contains(added, c.line) {
			t.Errorf("%s: trail gained %q, want %q", c.verb, added, c.line)
		}
	}
	// An operator's call on no task leaves no trail at all.
	_ = g.Guard("exit", "nosuch", func() error { return fault.Failed("no such task") })
	if _, err := os.Lstat(filepath.Join(st, "nosuch.audit")); err == nil {
		t.Error("a trail was made for an id with no record")
	}
}
