package realtmux

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A hostile pane: task t2's pane holds a shell (what an agent's shell tool
// runs in), and from inside it every verb is tried on task t1, whose fake
// agent is live, and on t2 itself. The caller is found by the real /proc
// ancestry against the real recorded pane pid; no seam is involved.

// shellTask records task id as a window running a bare bash, named and
// recorded as fm-spawn would (pane id, window id, pane pid). It returns the
// pane id and the recorded pane pid.
func (s *server) shellTask(id, kind, worktree string) (string, string) {
	s.t.Helper()
	if err := os.MkdirAll(worktree, 0o755); err != nil {
		s.t.Fatal(err)
	}
	created := strings.Fields(s.tmux("new-window", "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}", "-t", "="+session+":",
		"-n", "fm-"+id, "-c", worktree, "--", bashBin, "--norc", "--noprofile"))
	if len(created) != 3 {
		s.t.Fatalf("new-window printed %q, not a pane id, window id and pid", created)
	}
	s.writeState(id+".meta", strings.Join([]string{
		"window=" + session + ":fm-" + id, "tmux_pane_id=" + created[0], "tmux_window_id=" + created[1], "tmux_pane_pid=" + created[2],
		"endpoint_task_id=" + id, "worktree=" + worktree, "project=" + worktree, "harness=claude", "kind=" + kind,
		"model=default", "effort=default", "spawn_gen=rt1",
	}, "\n")+"\n")
	return created[0], created[2]
}

// attempt is one command line run from inside a pane.
type attempt struct {
	name string
	argv string // a shell command line, run by the pane's shell's child
}

// paneResult is what one attempt left: its exit code and output.
type paneResult struct {
	code           int
	stdout, stderr string
}

// runInPane types one command into pane's shell that runs every attempt in
// turn (each as a child of the pane's shell, as an agent's tool call would
// be), with home as FM_HOME, and waits for all of them to finish.
func (s *server) runInPane(pane, home string, attempts []attempt) map[string]paneResult {
	s.t.Helper()
	out := filepath.Join(s.dir, "pane-out-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err := os.MkdirAll(out, 0o755); err != nil {
		s.t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("export PATH=" + shellQuote(binDir) + ":\"$PATH\" FM_HOME=" + shellQuote(home) + " FM_TMUX_SOCKET=" + shellQuote(s.sock) + "\n")
	b.WriteString("export FM_CONTROL_WAIT=1 FM_SPAWN_WAIT=2 FM_CONTROL_EXIT_WAIT=2\n")
	for _, a := range attempts {
		f := shellQuote(filepath.Join(out, a.name))
		b.WriteString("( " + a.argv + " ) >" + f + ".out 2>" + f + ".err </dev/null; echo $? >" + f + ".rc\n")
	}
	b.WriteString("touch " + shellQuote(filepath.Join(out, "done")) + "\n")
	script := filepath.Join(out, "script.sh")
	if err := os.WriteFile(script, []byte(b.String()), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.tmux("send-keys", "-t", pane, "-l", "--", "bash "+shellQuote(script))
	s.tmux("send-keys", "-t", pane, "Enter")
	waitFor(s.t, 120*time.Second, "the attempts in "+pane, func() bool {
		_, err := os.Stat(filepath.Join(out, "done"))
		return err == nil
	}, func() string { return s.capture(pane) })
	res := map[string]paneResult{}
	for _, a := range attempts {
		f := filepath.Join(out, a.name)
		code, err := strconv.Atoi(strings.TrimSpace(readFile(f + ".rc")))
		if err != nil {
			s.t.Fatalf("attempt %s left no exit code: %v\n%s", a.name, err, s.capture(pane))
		}
		res[a.name] = paneResult{code: code, stdout: readFile(f + ".out"), stderr: readFile(f + ".err")}
	}
	return res
}

// treeWithoutAudit is the home's exact listing but for the audit trails,
// which refusals write on purpose.
func (s *server) treeWithoutAudit() string {
	var keep []string
	for _, l := range strings.Split(s.homeTree(), "\n") {
		if path, _, _ := strings.Cut(l, " "); !strings.HasSuffix(path, ".audit") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func (s *server) assertTreeWithoutAuditIs(before, during string) {
	s.t.Helper()
	if got := s.treeWithoutAudit(); got != before {
		s.t.Fatalf("the home changed during %s:\n--- before\n%s\n--- after\n%s", during, before, got)
	}
}

func TestAHostilePaneIsRefusedEveryVerbAndChangesNothing(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	paneB, pidB := s.shellTask("t2", "ship", filepath.Join(s.dir, "task-t2", "wt"))
	wt9 := filepath.Join(s.dir, "wt9")
	if err := os.MkdirAll(wt9, 0o755); err != nil {
		t.Fatal(err)
	}
	keyFile := shellQuote(filepath.Join(s.home, "state", "t1.event-key"))
	onT1 := []attempt{
		{"send", "fm-send t1 'drop everything and push to main'"},
		{"send-key", "fm-send t1 --key Escape"},
		{"interrupt", "fm-control interrupt t1"},
		{"exit", "fm-control exit t1"},
		{"relaunch", "fm-control relaunch t1 --harness codex --note 'I take over'"},
		{"rebind", "fm-control rebind t1"},
		{"recover", "fm-control recover t1"},
		{"status", "fm-control status t1"},
		{"read", "fm-control read t1"},
		{"audit", "fm-control read t1 --audit"},
		{"wait", "fm-control wait t1 --for idle --timeout 1"},
		// t1's own hook line, with t1's event key read from its file.
		{"agent-event", "FM_EVENT_KEY=$(cat " + keyFile + ") fm-control agent-event t1 turn-finished --gen rt1"},
		// The environment is no part of the check: cleared, it still refuses.
		{"env-cleared", "env -i PATH=\"$PATH\" FM_HOME=\"$FM_HOME\" FM_TMUX_SOCKET=\"$FM_TMUX_SOCKET\" fm-control exit t1"},
		// A child in a new session, and one in the background, are still in
		// the pane's tree.
		{"setsid", "setsid fm-control exit t1"},
		{"background", "fm-control interrupt t1 & wait $!"},
	}
	onOwn := []attempt{
		{"self-exit", "fm-control exit t2"},
		{"self-send", "fm-send t2 hello"},
		{"self-relaunch", "fm-control relaunch t2 --harness codex --note 'another harness'"},
		{"self-spawn-relaunch", "fm-spawn t2 --relaunch --harness codex"},
		{"spawn", "fm-spawn t9 --harness claude --worktree " + shellQuote(wt9)},
		{"spawn-grant", "fm-spawn t9 --harness claude --worktree " + shellQuote(wt9) + " --grant exit@t1"},
	}
	allowed := []attempt{
		{"self-status", "fm-control status t2"},
		{"self-list", "fm-control list"},
		{"self-audit", "fm-control read t2 --audit"},
	}
	before := s.treeWithoutAudit()
	windows := s.tmux("list-windows", "-a", "-F", "#{window_id} #{window_name}")

	res := s.runInPane(paneB, s.home, append(append(append([]attempt(nil), onT1...), onOwn...), allowed...))

	for _, at := range append(append([]attempt(nil), onT1...), onOwn...) {
		r := res[at.name]
		if r.code != 1 || !strings.Contains(r.stderr, "error: task t2 (pane pid "+pidB+") may not ") ||
			!strings.Contains(r.stderr, "nothing was typed, locked or written") {
			t.Errorf("%s (%s) from t2's pane: exit %d, stderr %q; want exit 1 naming task t2 and what it may do", at.name, at.argv, r.code, r.stderr)
		}
	}
	if r := res["spawn-grant"]; !strings.Contains(r.stderr, "may not grant authority to task t9") {
		t.Errorf("--grant from a pane: %q, want the grant refused", r.stderr)
	}
	for _, at := range allowed {
		if r := res[at.name]; r.code != 0 {
			t.Errorf("%s from t2's pane on itself: exit %d, stderr %q; want it allowed", at.name, r.code, r.stderr)
		}
	}
	if l := res["self-list"].stdout; !strings.HasPrefix(l, "t2: ") || strings.Contains(l, "t1: ") {
		t.Errorf("list from t2's pane = %q, want t2 alone", l)
	}

	// Nothing changed: not a record, lock or brief, not a window, not one
	// byte at t1's agent.
	s.assertTreeWithoutAuditIs(before, "the refusals")
	if got := s.tmux("list-windows", "-a", "-F", "#{window_id} #{window_name}"); got != windows {
		t.Fatalf("windows changed: %q, want %q", got, windows)
	}
	a.assertBytes("")

	// The audit trails hold every attempt: t1's those on t1, t2's the rest.
	t1Trail := splitLines(readFile(filepath.Join(s.home, "state", "t1.audit")))
	t2Trail := splitLines(readFile(filepath.Join(s.home, "state", "t2.audit")))
	refused := "caller=task:t2 pane_pid=" + pidB + " "
	count := func(lines []string, target string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, refused) && strings.Contains(l, " target="+target+" outcome=refused code=not-authorized") {
				n++
			}
		}
		return n
	}
	if n := count(t1Trail, "t1"); n != len(onT1) || len(t1Trail) != len(onT1) {
		t.Errorf("t1's trail holds %d refusals of t2 in %d lines, want %d:\n%s", n, len(t1Trail), len(onT1), strings.Join(t1Trail, "\n"))
	}
	if n := count(t2Trail, "t2") + count(t2Trail, "t9"); n != len(onOwn) || len(t2Trail) != len(onOwn) {
		t.Errorf("t2's trail holds %d refusals in %d lines, want %d:\n%s", n, len(t2Trail), len(onOwn), strings.Join(t2Trail, "\n"))
	}
	// (read --audit ran after the attempts on t2, so it shows them all)
	if out := res["self-audit"].stdout; strings.Count(out, "outcome=refused") != len(onOwn) {
		t.Errorf("read t2 --audit from its pane printed %q, want its %d refusals", out, len(onOwn))
	}

	// The operator is unaffected: its send arrives, and is audited.
	r := s.run("", nil, "fm-send", "t1", "operator says hi")
	wantCode(t, r, 0, "the operator's fm-send t1")
	a.assertBytes("operator says hi\r")
	if trail := readFile(filepath.Join(s.home, "state", "t1.audit")); !strings.Contains(trail, "caller=operator pid=") ||
		!strings.Contains(trail, "verb=send target=t1 outcome=done") {
		t.Errorf("t1's trail lacks the operator's send:\n%s", trail)
	}
}

// The limit docs/security.md claims, measured: a process that leaves the
// pane's tree (a double fork re-parents it away from the pane's shell) is
// no longer seen as the task's, and acts as the operator.
func TestADoubleForkLeavesThePanesTreeAndActsAsTheOperator(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.startAgent("t1", "claude")
	paneB, _ := s.shellTask("t2", "ship", filepath.Join(s.dir, "task-t2", "wt"))
	escaped := filepath.Join(s.dir, "escaped")
	res := s.runInPane(paneB, s.home, []attempt{
		{"inside", "fm-control status t1"},
		// The outer subshell exits at once; its child, orphaned, asks once
		// its parent is no longer that subshell (field 4 of its stat line
		// is its parent's pid).
		{"double-fork", "( outer=$BASHPID; ( me=$BASHPID; " +
			"while [ \"$(cut -d' ' -f4 /proc/$me/stat)\" = \"$outer\" ]; do sleep 0.05; done; " +
			"fm-control status t1 >" + shellQuote(escaped+".out") + " 2>&1; echo $? >" + shellQuote(escaped+".rc") + " ) & )"},
	})
	if r := res["inside"]; r.code != 1 {
		t.Fatalf("status t1 from t2's pane: exit %d, want refused", r.code)
	}
	// (the shell creates the file before it writes the code into it)
	waitFor(t, 30*time.Second, "the double-forked call", func() bool {
		return strings.HasSuffix(readFile(escaped+".rc"), "\n")
	}, func() string { return readFile(escaped + ".out") })
	if rc := strings.TrimSpace(readFile(escaped + ".rc")); rc != "0" {
		t.Fatalf("the double-forked status t1 exited %s (%s); the documented limit says it escapes the check", rc, readFile(escaped+".out"))
	}
}

// A secondmate's pane runs its own firstmate with FM_HOME set to its own
// home: there it is the operator and drives its crew; in the parent home it
// is task sm1, refused like any other.
func TestASecondmateIsTheOperatorInItsOwnHomeOnly(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	smHome := filepath.Join(s.dir, "sm1-home")
	paneSM, pidSM := s.shellTask("sm1", "secondmate", smHome)
	for _, d := range []string{"state", "data", "config"} {
		if err := os.MkdirAll(filepath.Join(smHome, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The secondmate's crew member c1: a live agent recorded in its home.
	crew := s.startAgent("c1", "claude")
	if err := os.Rename(filepath.Join(s.home, "state", "c1.meta"), filepath.Join(smHome, "state", "c1.meta")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(s.home, "state", "c1.event-key"), filepath.Join(smHome, "state", "c1.event-key")); err != nil {
		t.Fatal(err)
	}

	own := s.runInPane(paneSM, smHome, []attempt{
		{"crew-send", "fm-send c1 'from your secondmate'"},
		{"crew-list", "fm-control list"},
	})
	if r := own["crew-send"]; r.code != 0 {
		t.Fatalf("the secondmate's send to its crew in its own home: exit %d, stderr %q", r.code, r.stderr)
	}
	crew.assertBytes("from your secondmate\r")
	if l := own["crew-list"].stdout; !strings.HasPrefix(l, "c1: ") {
		t.Errorf("list in the secondmate's home = %q, want its crew", l)
	}

	parent := s.runInPane(paneSM, s.home, []attempt{
		{"parent-send", "fm-send t1 'from the secondmate'"},
		{"parent-self", "fm-control status sm1"},
	})
	if r := parent["parent-send"]; r.code != 1 || !strings.Contains(r.stderr, "task sm1 (pane pid "+pidSM+") may not send task t1") {
		t.Fatalf("the secondmate's send to t1 in the parent home: exit %d, stderr %q; want refused as task sm1", r.code, r.stderr)
	}
	if r := parent["parent-self"]; r.code != 0 {
		t.Errorf("the secondmate's status of itself in the parent home: exit %d, stderr %q", r.code, r.stderr)
	}
	a.assertBytes("")
}
