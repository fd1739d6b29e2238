package realtmux

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A verb that waits stops at SIGINT and says so: `fm-control wait` exits 1,
// code interrupted, at once rather than at its timeout.
func TestAWaitStopsAtSIGINTAndSaysSo(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.startAgent("t1", "claude")
	code, _, stderr := interruptedRun(t, s, nil, nil, "wait", "t1", "--for", "dead", "--timeout", "60s")
	if code != 1 {
		t.Fatalf("wait after SIGINT: exit %d, want 1 (stderr %q)", code, stderr)
	}
	if !strings.Contains(stderr, "the wait for task t1 was interrupted") {
		t.Fatalf("stderr = %q, want it to say the wait was interrupted", stderr)
	}
}

// A lifecycle verb stops at SIGINT too: `fm-control exit` waiting for an
// agent that ignores its exit command ends at the signal, not at
// FM_CONTROL_EXIT_WAIT, and says the wait was interrupted, not that the
// agent outlasted it.
func TestAnExitWaitingForItsAgentStopsAtSIGINT(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude", agentEnv("FAKEAGENT_IGNORE_EXIT=1"))
	// The signal goes once the agent took its exit command, so it lands in
	// the wait for the agent to stop, not in the typing before it.
	typed := func() bool { return slices.Contains(a.eventsAfterStart(), `submit "/exit"`) }
	code, stdout, stderr := interruptedRun(t, s, typed, []string{"FM_CONTROL_EXIT_WAIT=60"}, "exit", "t1")
	if code != 1 {
		t.Fatalf("exit after SIGINT: exit %d, want 1 (stdout %q, stderr %q)", code, stdout, stderr)
	}
	// Typing the command and waiting for the stop are both cut short at
	// the signal; either way it says so, never that the wait ran out.
	if !strings.Contains(stderr, "was interrupted") || strings.Contains(stderr, "within 60s") {
		t.Fatalf("stderr = %q, want it to say the wait was interrupted, not that it ran out", stderr)
	}
}

// interruptedRun starts fm-control with args, sends it SIGINT once its
// wait is under way (once under way says so, polled; without it, its keys
// or command go out within tens of ms and 600 ms is well past that), and
// returns how it exited. It fails the test when
// the process was killed by the signal instead of ending its wait, or
// took more than 3 s to end after it.
func interruptedRun(t *testing.T, s *server, underWay func() bool, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "fm-control"), args...)
	cmd.Env = append(append(append([]string(nil), s.env...), "FM_HOME="+s.home, "FM_TMUX_SOCKET="+s.sock, "TMUX="), env...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if underWay == nil {
		time.Sleep(600 * time.Millisecond)
	} else {
		waitFor(t, 20*time.Second, "fm-control "+args[0]+" under way", underWay, s.panes)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("fm-control %s took %v to stop after SIGINT", args[0], d)
		}
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0, out.String(), errs.String()
		case !errors.As(err, &ee):
			t.Fatalf("fm-control %s: %v", args[0], err)
		case ee.ExitCode() < 0:
			t.Fatalf("fm-control %s was killed by SIGINT instead of ending its wait (stderr %q)", args[0], errs.String())
		}
		return ee.ExitCode(), out.String(), errs.String()
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("fm-control %s did not stop within 10 s of SIGINT", args[0])
	}
	return 0, "", ""
}
