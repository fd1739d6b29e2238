package realtmux

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A verb that waits stops at SIGINT and says so: `fm-control wait` exits 1,
// code interrupted, at once rather than at its timeout. Only the verbs that
// wait watch for signals (the rest start 0.3 ms faster without the
// handler); this keeps the one that must.
func TestAWaitStopsAtSIGINTAndSaysSo(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.startAgent("t1", "claude")
	cmd := exec.Command(filepath.Join(binDir, "fm-control"), "wait", "t1", "--for", "dead", "--timeout", "60s")
	cmd.Env = append(append([]string(nil), s.env...), "FM_HOME="+s.home, "FM_TMUX_SOCKET="+s.sock, "TMUX=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The wait is under way once it has polled for a while.
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("wait after SIGINT: %v, want exit 1 (stderr %q)", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "the wait for task t1 was interrupted") {
			t.Fatalf("stderr = %q, want it to say the wait was interrupted", stderr.String())
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("the wait took %v to stop after SIGINT", d)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("fm-control wait did not stop within 10 s of SIGINT")
	}
}
