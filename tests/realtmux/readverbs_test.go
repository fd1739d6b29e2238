package realtmux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/tests/hometree"
)

// homeTree lists the home exactly (see hometree), so a read-only verb can
// be shown to leave it byte-identical.
func (s *server) homeTree() string {
	s.t.Helper()
	out, err := hometree.Listing(s.home)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

func (s *server) assertHomeIs(before, after string) {
	s.t.Helper()
	if got := s.homeTree(); got != before {
		s.t.Fatalf("the home changed during %s:\n--- before\n%s--- after\n%s", after, before, got)
	}
}

// An agent prints an OSC 52 clipboard write and an OSC 8 link; fm-control
// read prints the text around them and not one byte of either sequence.
func TestReadStripsWhatTheAgentPrinted(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	banner := `before \x1b]52;c;cm0gLXJmIH4K\x07after \x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\ end`
	// grok's fake draws a bare "> " composer (no harness frame to read past).
	a := s.startAgent("r1", "grok", agentEnv("FAKEAGENT_BANNER="+banner))
	waitFor(t, 10*time.Second, "the banner on screen", func() bool {
		return strings.Contains(s.capture(a.pane), "before after link end")
	}, a.state)
	before := s.homeTree()

	// The whole recent text: the shell line that started the agent (the
	// banner's escapes as typed text) scrolled into the history, then the
	// agent's screen. Not one control byte.
	trace := s.traceFile("read")
	r := s.run("", []string{"FM_RUNNER_TRACE=" + trace}, "fm-control", "read", "r1")
	wantCode(t, r, 0, "fm-control read r1")
	for _, bad := range []string{"\x1b", "\x07", "\r"} {
		if strings.Contains(r.stdout, bad) {
			t.Fatalf("stdout = %q holds %q", r.stdout, bad)
		}
	}
	tmuxCalls, _, lines := traceCounts(t, trace)
	t.Logf("fm-control read r1: %d tmux calls: %q", tmuxCalls, lines)
	// The agent's screen alone: the text around the sequences, none of
	// their payload.
	r = s.run("", nil, "fm-control", "read", "r1", "--lines", "3")
	wantCode(t, r, 0, "fm-control read r1 --lines 3")
	if r.stdout != "grok fake agent\nbefore after link end\n>\n" {
		t.Fatalf("stdout = %q, want the header, the banner's text and the composer", r.stdout)
	}
	r = s.run("", nil, "fm-control", "read", "r1", "--lines", "3", "--json")
	wantCode(t, r, 0, "fm-control read r1 --json")
	if !strings.Contains(r.stdout, `"lines":3,`) || !strings.Contains(r.stdout, `"text":"grok fake agent\nbefore after link end\n>"`) {
		t.Fatalf("stdout = %q, want the stripped text in one JSON string", r.stdout)
	}
	s.assertHomeIs(before, "fm-control read")
	a.assertBytes("") // nothing typed
}

// wait --for dead times out (exit 4) while the agent runs and returns as
// soon as the agent exits, leaving the home as it was.
func TestWaitForDeadReturnsWhenTheAgentExits(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("w1", "claude")
	before := s.homeTree()

	r := s.run("", nil, "fm-control", "wait", "w1", "--for", "dead", "--timeout", "0.3")
	wantCode(t, r, 4, "fm-control wait w1 --for dead --timeout 0.3 on a live agent")
	if !strings.Contains(r.stderr, "was not dead within 300ms (state=alive") {
		t.Fatalf("stderr = %q", r.stderr)
	}

	cmd := exec.Command(filepath.Join(binDir, "fm-control"), "wait", "w1", "--for", "dead", "--timeout", "30")
	trace := s.traceFile("wait")
	cmd.Env = append(append([]string(nil), s.env...), "FM_HOME="+s.home, "FM_TMUX_SOCKET="+s.sock, "TMUX=", "FM_RUNNER_TRACE="+trace)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Two tmux reads in the trace: the wait has seen the agent alive and is
	// polling, so what follows tests that it notices the exit.
	waitFor(t, 10*time.Second, "the wait to poll twice", func() bool {
		n, _, _ := traceCounts(t, trace)
		return n >= 2
	}, a.state)
	select {
	case err := <-done:
		t.Fatalf("wait ended before the agent exited: %v\nstdout %q stderr %q", err, stdout.String(), stderr.String())
	default:
	}
	s.tmux("send-keys", "-t", a.pane, "-l", "/exit")
	s.tmux("send-keys", "-t", a.pane, "Enter")
	exited := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wait: %v\nstdout %q stderr %q\n%s", err, stdout.String(), stderr.String(), a.state())
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("wait did not return after the agent exited\n%s", a.state())
	}
	t.Logf("wait returned %v after /exit was typed: %s", time.Since(exited).Round(time.Millisecond), strings.TrimSpace(stdout.String()))
	if !strings.HasPrefix(stdout.String(), "reached w1 for=dead state=dead ") {
		t.Fatalf("stdout = %q", stdout.String())
	}
	if ev := a.eventsWithPrefix("exit"); len(ev) != 1 {
		t.Fatalf("the agent's events do not show its exit: %q", a.eventLines())
	}
	s.assertHomeIs(before, "fm-control wait")
}

// list lists every pane and reads the live agents' screens (as status
// does) in one tmux call, however many tasks: a live agent proved from
// /proc needs no other, and a window of someone else's whose name holds a
// newline (tmux prints it raw) changes nothing. Panes /proc cannot prove
// (here, shells) take one call more, the full snapshot, for all of them at
// once.
func TestListMakesAtMostTwoTmuxCallsForAnyNumberOfTasks(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.tmux("new-window", "-d", "-t", "="+session+":", "-n", "odd\nname\tx")
	a := s.startAgent("l0", "claude")
	count := func(n int) (int, string) {
		trace := s.traceFile(fmt.Sprintf("list-%d", n))
		r := s.run("", []string{"FM_RUNNER_TRACE=" + trace}, "fm-control", "list")
		wantCode(t, r, 0, "fm-control list")
		if got := len(splitLines(r.stdout)); got != n {
			t.Fatalf("list printed %d lines for %d tasks:\n%s", got, n, r.stdout)
		}
		calls, _, _ := traceCounts(t, trace)
		t.Logf("fm-control list, %d task(s): %d tmux call(s), %v wall", n, calls, r.elapsed.Round(time.Millisecond))
		return calls, r.stdout
	}
	if calls, out := count(1); calls != 1 || !strings.Contains(out, "l0: harness=claude kind=ship backend=tmux endpoint=fmses:fm-l0 state=alive activity=unknown journal=none") {
		t.Fatalf("1 task: %d tmux calls, output %q\n%s", calls, out, a.state())
	}
	for i := 1; i < 20; i++ {
		id := fmt.Sprintf("l%02d", i)
		wt := filepath.Join(s.dir, "wt-"+id)
		if err := os.MkdirAll(wt, 0o755); err != nil {
			t.Fatal(err)
		}
		pane := strings.TrimSpace(s.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "="+session+":", "-n", "fm-"+id, "-c", wt))
		// Until the pane's child has exec'd its shell it runs as tmux,
		// which reads unattributed, not the dead (shell) state asserted.
		waitFor(t, 15*time.Second, "the shell in "+id, func() bool {
			c := s.format(pane, "#{pane_current_command}")
			return c != "" && c != "tmux"
		}, s.panes)
		s.writeState(id+".meta", fmt.Sprintf("window=%s:fm-%s\nendpoint_task_id=%s\nworktree=%s\nharness=codex\nkind=scout\n", session, id, id, wt))
	}
	before := s.homeTree()
	calls, out := count(20)
	if calls != 2 {
		t.Fatalf("20 tasks, 19 of them shells: %d tmux calls, want 2", calls)
	}
	if !strings.Contains(out, "l19: harness=codex kind=scout backend=tmux endpoint=fmses:fm-l19 state=dead ") {
		t.Fatalf("list output %q", out)
	}
	s.assertHomeIs(before, "fm-control list")
}
