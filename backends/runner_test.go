package backends

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A call that outlives its bound is killed with its whole process group (a
// shell wrapper and the child it waits on), and the error names the call.
func TestBoundedKillsAHungCallAndNamesIt(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tmux")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nsleep 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := Bounded{Inner: &ExecRunner{}, Timeout: 200 * time.Millisecond}
	start := time.Now()
	_, err := r.Run(context.Background(), Cmd{Path: bin, Args: []string{"-L", "sock", "list-windows", "-t", "=s"}})
	// Past waitDelay, the sleep held the pipes: only the shell was killed.
	if took := time.Since(start); took >= waitDelay {
		t.Fatalf("the hung call took %v to end", took)
	}
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want a TimeoutError", err)
	}
	if got, want := err.Error(), "tmux list-windows timed out after 200ms"; got != want {
		t.Fatalf("err = %q, want %q", got, want)
	}
	if got := StderrOf(err); !strings.Contains(got, "timed out") {
		t.Fatalf("StderrOf = %q, want the timeout", got)
	}
}

func TestBoundedPassesFastCallsAndCancellationThrough(t *testing.T) {
	r := Bounded{Inner: &ExecRunner{}, Timeout: 5 * time.Second}
	out, err := r.Run(context.Background(), Cmd{Path: "sh", Args: []string{"-c", "echo ok"}})
	if err != nil || strings.TrimSpace(string(out.Stdout)) != "ok" {
		t.Fatalf("fast call: %q %v", out.Stdout, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.Run(ctx, Cmd{Path: "sleep", Args: []string{"10"}})
	var te *TimeoutError
	if err == nil || errors.As(err, &te) {
		t.Fatalf("a cancelled call = %v, want a failure that is not a timeout", err)
	}
}

func TestCallNameSkipsServerOptions(t *testing.T) {
	cases := map[string]Cmd{
		"tmux list-windows":         {Path: "/usr/bin/tmux", Args: []string{"-S", "/tmp/s", "list-windows"}},
		"zellij action dump-screen": {Path: "zellij", Args: []string{"--session", "s", "action", "dump-screen"}},
		"herdr agent":               {Path: "herdr", Args: []string{"agent", "get", "--session", "s", "p1"}},
		"ps":                        {Path: "ps"},
	}
	for want, c := range cases {
		if got := callName(c); got != want {
			t.Errorf("callName(%v) = %q, want %q", c, got, want)
		}
	}
}

// A poll starts at 10 ms and doubles to its cap; a cap below 10 ms polls at
// the cap throughout (FM_CONTROL_POLL=5ms keeps meaning 5 ms).
func TestBackoffStartsAtMinPollAndDoublesToItsCap(t *testing.T) {
	for _, c := range []struct {
		max  time.Duration
		want []time.Duration
	}{
		{100 * time.Millisecond, []time.Duration{10, 20, 40, 80, 100, 100}},
		{25 * time.Millisecond, []time.Duration{10, 20, 25, 25}},
		{5 * time.Millisecond, []time.Duration{5, 5, 5}},
		{0, []time.Duration{10, 10}},
	} {
		b := &Backoff{Max: c.max}
		for i, w := range c.want {
			if got := b.Next(); got != w*time.Millisecond {
				t.Fatalf("Max %v: interval %d = %v, want %v", c.max, i, got, w*time.Millisecond)
			}
		}
	}
}

// What the runner's callers rely on: stdin, separate streams, exit codes,
// signal deaths and a program not found.
func TestExecRunnerRuns(t *testing.T) {
	r := &ExecRunner{}
	ctx := context.Background()

	// stdin in, stdout and stderr apart, the exit code kept
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB, past a pipe's buffer
	out, err := r.Run(ctx, Cmd{Path: "sh", Args: []string{"-c", "cat; echo warn >&2; exit 3"}, Stdin: []byte(big)})
	var re *RunError
	if !errors.As(err, &re) || re.ExitCode != 3 || out.ExitCode != 3 || string(out.Stdout) != big || strings.TrimSpace(re.Stderr) != "warn" {
		t.Fatalf("exit 3: err %v, code %d, %d bytes out, stderr %q", err, out.ExitCode, len(out.Stdout), out.Stderr)
	}

	// an Env entry replaces the inherited one: a C program's getenv takes
	// the first of two
	t.Setenv("FM_RUNNER_TEST", "inherited")
	out, err = r.Run(ctx, Cmd{Path: "env", Env: []string{"FM_RUNNER_TEST=given"}})
	if err != nil || strings.Count(string(out.Stdout), "FM_RUNNER_TEST=") != 1 || !strings.Contains(string(out.Stdout), "FM_RUNNER_TEST=given\n") {
		t.Fatalf("env: %v\n%s", err, out.Stdout)
	}
	out, err = r.Run(ctx, Cmd{Path: "env", Unset: []string{"FM_RUNNER_TEST"}})
	if err != nil || strings.Contains(string(out.Stdout), "FM_RUNNER_TEST=") {
		t.Fatalf("unset: %v\n%s", err, out.Stdout)
	}

	// no stdin given is /dev/null, not a closed descriptor
	out, err = r.Run(ctx, Cmd{Path: "sh", Args: []string{"-c", "cat; echo end"}})
	if err != nil || string(out.Stdout) != "end\n" {
		t.Fatalf("no stdin: %q %v", out.Stdout, err)
	}

	// a program a signal ended has no exit code, as os/exec's ExitCode
	out, err = r.Run(ctx, Cmd{Path: "sh", Args: []string{"-c", "kill -9 $$"}})
	if !errors.As(err, &re) || re.ExitCode != -1 || out.ExitCode != -1 || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("killed by a signal: %v (exit %d)", err, out.ExitCode)
	}

	// a program not on PATH did not start
	_, err = r.Run(ctx, Cmd{Path: "fm-no-such-program"})
	if !errors.As(err, &re) || re.ExitCode != -1 || !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("missing program: %v", err)
	}
}

// A child that escapes the call's process group and keeps its output
// pipes open holds the call for waitDelay after the program exits, no
// longer.
func TestExecRunnerDoesNotWaitOnAnEscapedChild(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	start := time.Now()
	out, err := (&ExecRunner{}).Run(context.Background(), Cmd{Path: "sh", Args: []string{"-c", "setsid sleep 30 & echo started"}})
	took := time.Since(start)
	if took > waitDelay+2*time.Second {
		t.Fatalf("the call took %v: it waited on the escaped child", took)
	}
	if !strings.Contains(string(out.Stdout), "started") {
		t.Fatalf("stdout %q (err %v)", out.Stdout, err)
	}
}
