package realtmux

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wait exits 0 only for the task's own live agent: a SIGSTOPped agent (its
// last report still says idle) ends the wait at once, exit 1, and so does a
// socket where no server runs.
func TestWaitOnAStoppedAgentEndsAtOnce(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	s.reportTurnEnd("t1")
	r := s.run("", nil, "fm-control", "wait", "t1", "--for", "idle", "--timeout", "10")
	wantCode(t, r, 0, "fm-control wait t1 --for idle on a live idle agent")
	if !strings.HasPrefix(r.stdout, "reached t1 for=idle state=alive activity=idle evidence=telemetry ") {
		t.Fatalf("stdout = %q", r.stdout)
	}

	if err := syscall.Kill(a.pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Resumed at the end so the agent can be stopped with its server.
	t.Cleanup(func() { _ = syscall.Kill(a.pid(), syscall.SIGCONT) })
	waitFor(t, 5*time.Second, "the agent to stop", func() bool { return a.command() == "bash" }, a.state)
	for _, cond := range []string{"idle", "ready", "dead"} {
		r = s.run("", nil, "fm-control", "wait", "t1", "--for", cond, "--timeout", "30")
		wantCode(t, r, 1, "fm-control wait t1 --for "+cond+" on a stopped agent")
		if !strings.Contains(r.stderr, "t1's agent is stopped (state: suspended") || r.stdout != "" {
			t.Fatalf("--for %s: stdout %q stderr %q, want the suspended refusal", cond, r.stdout, r.stderr)
		}
		if r.elapsed > 5*time.Second {
			t.Fatalf("--for %s took %v: a stopped agent must end the wait at once, not at its timeout", cond, r.elapsed)
		}
	}
	r = s.run("", nil, "fm-control", "wait", "t1", "--for", "idle", "--timeout", "30", "--json")
	if !strings.Contains(r.stderr, `"code":"agent-suspended"`) {
		t.Fatalf("--json stderr = %q, want code agent-suspended", r.stderr)
	}

	r = s.run("", []string{"FM_TMUX_SOCKET=" + s.sock + "-nosuch"}, "fm-control", "wait", "t1", "--for", "idle", "--timeout", "30")
	wantCode(t, r, 1, "fm-control wait on a socket where no server runs")
	if !strings.Contains(r.stderr, "could not be read, so whether its agent is idle is unknown") || r.elapsed > 5*time.Second {
		t.Fatalf("wrong socket: stderr %q after %v, want unreadable at once", r.stderr, r.elapsed)
	}
}

// C-c quits an idle codex: fm-send --key refuses it, naming fm-control
// exit, and the agent reads nothing; --allow-exit sends it.
func TestSendKeyThatEndsTheAgentIsRefused(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("x1", "codex")
	before := s.treeWithoutAudit()
	r := s.run("", nil, "fm-send", "x1", "--key", "C-c")
	wantCode(t, r, 1, "fm-send x1 --key C-c to codex")
	if !strings.Contains(r.stderr, "key C-c ends codex (at idle: quits;") || !strings.Contains(r.stderr, "fm-control exit x1") || !strings.Contains(r.stderr, "--allow-exit") {
		t.Fatalf("stderr = %q, want the refusal naming fm-control exit and --allow-exit", r.stderr)
	}
	a.quiet()
	if got := a.bytes(); got != "" {
		t.Fatalf("the agent read %q after a refused key, want nothing", got)
	}
	// Only the audit trail took the attempt (docs/security.md).
	s.assertTreeWithoutAuditIs(before, "a refused fm-send --key")
	if trail := readFile(filepath.Join(s.home, "state", "x1.audit")); !strings.Contains(trail, "caller=operator pid=") || !strings.Contains(trail, "verb=send target=x1 outcome=failed code=key-ends-agent") {
		t.Fatalf("x1's audit trail = %q, want the refused send", trail)
	}

	r = s.run("", nil, "fm-send", "x1", "--key", "C-c", "--allow-exit")
	wantCode(t, r, 0, "fm-send x1 --key C-c --allow-exit")
	waitFor(t, 5*time.Second, "the agent to read C-c", func() bool { return a.bytes() == "\x03" }, a.state)
}

// One agent's shell (its bash tool, say) holds its own event key. A hook
// command line copied from another task and run there is refused and
// counted; the other task's state is not touched, and its own agent's
// report still counts.
func TestForgedAgentEventFromAnotherPaneIsRefused(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.startAgent("a1", "claude")
	s.startAgent("b1", "claude")
	stateFile := filepath.Join(s.home, "state", "a1.agent-state")

	// b1's shell: the environment its agent's tools inherit.
	rc := filepath.Join(s.dir, "forged.rc")
	pane := strings.TrimSpace(s.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "="+session+":", "-n", "b1-tool",
		"-e", "FM_EVENT_KEY=rt-event-key-b1", "--", bashBin, "--norc", "--noprofile"))
	forged := "FM_HOME=" + shellQuote(s.home) + " " + shellQuote(filepath.Join(binDir, "fm-control")) +
		" agent-event a1 turn-finished --gen rt1 2>" + shellQuote(rc+".err") + "; echo $? > " + shellQuote(rc)
	s.tmux("send-keys", "-t", pane, "-l", "--", forged)
	s.tmux("send-keys", "-t", pane, "Enter")
	waitFor(t, 10*time.Second, "the forged event to finish", func() bool { return readFile(rc) != "" }, func() string { return s.capture(pane) })
	if got := strings.TrimSpace(readFile(rc)); got != "1" {
		t.Fatalf("the forged agent-event exited %s, want 1; stderr %q", got, readFile(rc+".err"))
	}
	if !strings.Contains(readFile(rc+".err"), "refused: it presents another key than the task's current one") {
		t.Fatalf("stderr = %q", readFile(rc+".err"))
	}
	if _, err := os.Stat(stateFile); err == nil {
		t.Fatalf("the forged event wrote %s: %q", stateFile, readFile(stateFile))
	}
	r := s.run("", nil, "fm-control", "status", "a1")
	if !strings.Contains(r.stdout, " events_refused=1 ") {
		t.Fatalf("status a1 = %q, want events_refused=1", r.stdout)
	}
	if log := readFile(filepath.Join(s.home, "state", "a1.event-refused")); !strings.Contains(log, "event=turn-finished reason=wrong-key") {
		t.Fatalf("refused log = %q", log)
	}

	s.reportTurnEnd("a1")
	if !strings.Contains(readFile(stateFile), "state=idle") {
		t.Fatalf("a1's own report was not recorded: %q", readFile(stateFile))
	}
}
