package realtmux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// assertShellNeverRan proves the pane's shell did not run a refused
// message: a control command typed after the refusal runs only once the
// shell has read everything typed before it, so when the control marker
// exists, a marker the message would have made must exist too.
func (a *agent) assertShellNeverRan(markers ...string) {
	a.s.t.Helper()
	control := filepath.Join(a.s.dir, "control-"+a.id)
	a.s.tmux("send-keys", "-t", a.pane, "-l", "--", "touch "+shellQuote(control))
	a.s.tmux("send-keys", "-t", a.pane, "Enter")
	waitFor(a.s.t, 10*time.Second, "the shell to run the control command", func() bool {
		_, err := os.Stat(control)
		return err == nil
	}, a.state)
	for _, m := range markers {
		if _, err := os.Stat(m); !errors.Is(err, os.ErrNotExist) {
			a.s.t.Fatalf("the shell ran a refused message: %s exists\n%s", m, a.state())
		}
	}
}

func (a *agent) pid() int {
	a.s.t.Helper()
	ev := a.eventLines()
	if len(ev) == 0 {
		a.s.t.Fatalf("no start event\n%s", a.state())
	}
	_, p, _ := strings.Cut(ev[0], "pid=")
	pid, err := strconv.Atoi(strings.Fields(p)[0])
	if err != nil {
		a.s.t.Fatalf("start event %q: %v", ev[0], err)
	}
	return pid
}

// After fm-control exit the pane is a bare shell: neither a message (one
// line or several) nor a key reaches it, and the refusal says what to do.
func TestSendToAnExitedAgentTypesNothingIntoTheShell(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	wantCode(t, s.run("", []string{"FM_CONTROL_EXIT_WAIT=10"}, "fm-control", "exit", "t1"), 0, "fm-control exit t1")
	waitFor(t, 10*time.Second, "the pane to return to bash", func() bool { return a.command() == "bash" }, a.state)

	one, two, three := filepath.Join(s.dir, "one"), filepath.Join(s.dir, "two"), filepath.Join(s.dir, "three")
	r := s.run("", nil, "fm-send", "t1", "touch "+one)
	wantCode(t, r, 1, "fm-send to an exited agent")
	if !strings.Contains(r.stderr, "has no agent, only a shell") || !strings.Contains(r.stderr, "fm-spawn t1 --relaunch") {
		t.Fatalf("stderr = %q, want the dead-shell refusal naming fm-spawn t1 --relaunch", r.stderr)
	}
	if strings.Contains(r.stdout, "submit=confirmed") {
		t.Fatalf("stdout claims a submit: %q", r.stdout)
	}
	wantCode(t, s.run("touch "+two+"\ntouch "+three+"\n", nil, "fm-send", "t1", "-"), 1, "multi-line fm-send to an exited agent")
	wantCode(t, s.run("", nil, "fm-send", "t1", "--key", "Enter"), 1, "fm-send --key Enter to an exited agent")
	a.assertShellNeverRan(one, two, three)
}

// A suspended agent (SIGTSTP) leaves its shell in the foreground: the
// message would run there. It is refused, naming fg.
func TestSendToASuspendedAgentTypesNothingIntoTheShell(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	if err := syscall.Kill(a.pid(), syscall.SIGTSTP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the shell to take the foreground back", func() bool { return a.command() == "bash" }, a.state)

	marker := filepath.Join(s.dir, "suspended")
	r := s.run("", nil, "fm-send", "t1", "touch "+marker)
	wantCode(t, r, 1, "fm-send to a suspended agent")
	if !strings.Contains(r.stderr, "holds a stopped agent") || !strings.Contains(r.stderr, "fg") {
		t.Fatalf("stderr = %q, want the suspended refusal naming fg", r.stderr)
	}
	wantCode(t, s.run("", nil, "fm-send", "t1", "--key", "C-c"), 1, "fm-send --key C-c to a suspended agent")
	a.assertShellNeverRan(marker)
	if got := a.bytes(); got != "" {
		t.Fatalf("the suspended agent read %q, want nothing", got)
	}
}

// Sends racing a relaunch queue behind its input lock, which it holds from
// the old agent's stop until the new one is up: every send reaches an agent
// or is refused, none is typed into the shell between the two agents, and
// the launch line is never corrupted.
func TestSendsDuringARelaunchNeverReachTheShell(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	a.relaunchable("Implement the parser.\n")
	conf := "[harness.claude]\nbinary = \"" + filepath.Join(binDir, "claude") + "\"\n"
	if err := os.WriteFile(filepath.Join(s.home, "config", "fm.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"FM_CONTROL_EXIT_WAIT=10", "FM_CONTROL_LAUNCH_WAIT=15", "FM_SEND_LOCK_WAIT=30"}

	var done atomic.Bool
	var mu sync.Mutex
	var markers []string
	var results []result
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; !done.Load() && n < 40; n++ {
				m := filepath.Join(s.dir, fmt.Sprintf("sent-%d-%d", g, n))
				r := s.run("", env, "fm-send", "t1", "touch "+m)
				mu.Lock()
				markers, results = append(markers, m), append(results, r)
				mu.Unlock()
			}
		}(g)
	}
	rel := s.run("", env, "fm-control", "relaunch", "t1", "--note", "continue")
	done.Store(true)
	wg.Wait()
	wantCode(t, rel, 0, "fm-control relaunch t1 during sends")
	if !strings.Contains(rel.stdout, " ready=confirmed phase=complete") {
		t.Fatalf("relaunch stdout = %q, want ready=confirmed", rel.stdout)
	}
	for _, r := range results {
		if r.code != 0 && r.code != 1 {
			t.Errorf("a racing send: %s", r)
		}
		if r.code == 1 && strings.Contains(r.stderr, "only a shell") {
			t.Errorf("a racing send found the shell gap (the relaunch released its lock early): %s", r)
		}
	}
	t.Logf("%d racing sends", len(results))
	// Stop the replacement so the shell can run a control command.
	wantCode(t, s.run("", env, "fm-control", "exit", "t1"), 0, "fm-control exit t1 after the relaunch")
	waitFor(t, 10*time.Second, "the pane to return to bash", func() bool { return a.command() == "bash" }, a.state)
	a.assertShellNeverRan(markers...)
}

// A tmux that never answers one subcommand: the call is killed (its whole
// process group) at FM_MUX_TIMEOUT, fm-send exits 1 naming the call, and
// the input lock is released so the next send goes through.
func TestAHungTmuxEndsInATimeoutAndReleasesTheLock(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	shim := filepath.Join(s.dir, "shim")
	if err := os.MkdirAll(shim, 0o755); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(s.dir, "hung.pid")
	script := "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = display-message ]; then echo $$ > " + shellQuote(pidFile) + "; sleep 1000; fi\ndone\nexec " + shellQuote(tmuxBin) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(shim, "tmux"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	hungPath := "PATH=" + shim + string(os.PathListSeparator) + os.Getenv("PATH")
	r := s.run("", []string{hungPath, "FM_MUX_TIMEOUT=1"}, "fm-send", "t1", "hello")
	wantCode(t, r, 1, "fm-send with a hung tmux")
	if !strings.Contains(r.stderr, "tmux display-message timed out after 1s") {
		t.Fatalf("stderr = %q, want it to name the hung call", r.stderr)
	}
	if r.elapsed > 5*time.Second {
		t.Fatalf("fm-send took %v with FM_MUX_TIMEOUT=1", r.elapsed)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(pidFile)))
	if err != nil {
		t.Fatalf("the shim never ran display-message: %v", err)
	}
	waitFor(t, 5*time.Second, "the hung call's process group to be gone", func() bool {
		return errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)
	}, a.state)
	r = s.run("", []string{"FM_SEND_LOCK_WAIT=2"}, "fm-send", "t1", "hello")
	wantCode(t, r, 0, "fm-send after the hung call")
	a.assertBytes("hello\r")
}

// A tmux server that stops answering (here, SIGSTOPped), not its client:
// the client blocks on the socket until FM_MUX_TIMEOUT kills it, fm-send
// exits 1 naming the call, and the next send goes through once the server
// answers again.
func TestAStoppedServerEndsACallAtTheTimeout(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	pid, err := strconv.Atoi(strings.TrimSpace(s.tmux("display-message", "-p", "#{pid}")))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	r := s.run("", []string{"FM_MUX_TIMEOUT=1"}, "fm-send", "t1", "hello")
	resume()
	wantCode(t, r, 1, "fm-send to a stopped tmux server")
	if !strings.Contains(r.stderr, "timed out after 1s") {
		t.Fatalf("stderr = %q, want it to name the timed-out call", r.stderr)
	}
	if r.elapsed > 5*time.Second {
		t.Fatalf("fm-send took %v with FM_MUX_TIMEOUT=1", r.elapsed)
	}
	r = s.run("", []string{"FM_SEND_LOCK_WAIT=2"}, "fm-send", "t1", "hello")
	wantCode(t, r, 0, "fm-send once the server answers again")
	a.assertBytes("hello\r")
}

// Input left in the composer (an /exit fmctl did not type) is read by
// claude's screen signature: a person's draft, refused and kept; with
// --discard-draft fm-send clears it with claude's verified clear (End, then
// C-u twice a row plus one), proves the composer empty, and only then
// types, so the agent never reads "/exitplease run the tests".
func TestLeftoverComposerInputIsNeverGluedToAMessage(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	s.tmux("send-keys", "-t", a.pane, "-l", "--", "/exit")
	waitFor(t, 5*time.Second, "the composer to show /exit", func() bool {
		return strings.Contains(s.capture(a.pane), "❯ /exit")
	}, a.state)
	r := s.run("", nil, "fm-send", "t1", "please run the tests")
	wantCode(t, r, 1, "fm-send over a draft")
	if !strings.Contains(r.stderr, `holds a draft fmctl did not type ("/exit")`) {
		t.Fatalf("stderr = %q, want it to quote the draft it kept", r.stderr)
	}
	r = s.run("", nil, "fm-send", "t1", "--discard-draft", "please run the tests")
	wantCode(t, r, 0, "fm-send --discard-draft over a draft")
	if !strings.Contains(r.stdout, `discarded="/exit"`) {
		t.Fatalf("stdout = %q, want it to say the held /exit was discarded", r.stdout)
	}
	a.assertEvents("clear", "clear", "clear", `submit "please run the tests"`)
}

// An agent the first Enter ended (a sent /exit) can leave its last frame
// on screen, its composer still drawing the text (codex's "› /exit"), which
// reads as a submit still pending. A retried Enter passes the gate again,
// so it never reaches the shell that took the pane back.
func TestRetriedEnterNeverReachesTheShellTheAgentLeft(t *testing.T) {
	t.Parallel()
	prompts := filepath.Join(t.TempDir(), "prompts")
	s := newServer(t, "PROMPT_COMMAND=echo >> "+shellQuote(prompts))
	a := s.startAgent("t1", "codex")
	before := len(splitLines(readFile(prompts)))
	r := s.run("", nil, "fm-send", "t1", "/exit")
	wantCode(t, r, 3, "fm-send t1 /exit, which ends the agent")
	waitFor(t, 10*time.Second, "the pane to return to bash", func() bool { return a.command() == "bash" }, a.state)
	a.assertShellNeverRan()
	// One prompt after the agent exited, one after the control command.
	// Any Enter fm-send retried reached the shell before that command, so
	// once the prompt after it is drawn every earlier one is counted.
	drawn := func() int { return len(splitLines(readFile(prompts))) - before }
	waitFor(t, 10*time.Second, "the prompt after the control command", func() bool { return drawn() >= 2 }, a.state)
	if got := drawn(); got != 2 {
		t.Fatalf("the shell drew %d prompts after the agent, want 2: it read %d Enter fm-send retried\n%s", got, got-2, a.state())
	}
}
