package lifecycle

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"fmctl/cmd/internal/task"
	"fmctl/harness"
)

// A daemon the agent started is found under the agent's process before
// the exit, said to be left while it runs, and not once it is gone.
func TestAgentDaemonsAreFoundUnderTheAgentAndReportedWhileTheyRun(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	tg := &task.Target{ID: "t1", Harness: harness.Harness{Name: "cline", Daemon: &harness.Daemon{Name: "hub", Arg: "--fm-test-daemon", Source: "test"}}}
	// This test process plays the agent; its child carries the daemon's
	// argument (sh runs sleep as its own child, so it stays the parent).
	daemon := exec.Command("sh", "-c", "sleep 30; true", "--fm-test-daemon")
	other := exec.Command("sh", "-c", "sleep 30; true", "--not-it")
	for _, c := range []*exec.Cmd{daemon, other} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	}
	ctx := context.Background()
	var found []Leftover
	deadline := time.Now().Add(5 * time.Second)
	for len(found) == 0 && time.Now().Before(deadline) {
		found = agentDaemons(ctx, tg, os.Getpid())
	}
	if len(found) != 1 || found[0].PID != daemon.Process.Pid || found[0].Name != "hub" {
		t.Fatalf("agentDaemons = %v, want hub:%d alone", found, daemon.Process.Pid)
	}
	s := Stopped{Result: ExitStopped, Left: daemonsLeft(ctx, tg, found)}
	if s.LeftValue() != found[0].String() || !strings.Contains(s.LeftNotice(tg), "kill ") {
		t.Errorf("left=%q notice %q, want hub:<pid> and how to end it", s.LeftValue(), s.LeftNotice(tg))
	}
	_ = daemon.Process.Kill()
	_ = daemon.Wait()
	if left := daemonsLeft(ctx, tg, found); len(left) != 0 {
		t.Errorf("daemonsLeft after it ended = %v, want none", left)
	}
	// A harness with no daemon, or no agent pid, looks for nothing.
	if got := agentDaemons(ctx, &task.Target{}, os.Getpid()); got != nil {
		t.Errorf("no daemon in the row: %v", got)
	}
}
