package wiring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/harness"
	"fmctl/state"
)

// hookWorld is an installed task whose fm-control is a script that records
// each call, so a test sees whether a hook's shell wrote the event itself
// or started the program.
func hookWorld(t *testing.T) (Task, harness.WiringTarget, state.Store, string) {
	t.Helper()
	h, task, w := geminiTask(t)
	store := state.Store{Dir: task.StateDir}
	calls := filepath.Join(t.TempDir(), "calls")
	w.FMControl = filepath.Join(t.TempDir(), "fm-control")
	if err := os.WriteFile(w.FMControl, []byte("#!/bin/sh\necho \"$*\" >>"+calls+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.EventsDir = store.AgentEventsDir(task.ID)
	if err := Install(h, task, w); err != nil {
		t.Fatal(err)
	}
	if err := store.WriteEventKey(task.ID, "k1"); err != nil {
		t.Fatal(err)
	}
	return task, w, store, calls
}

func runHook(t *testing.T, shell, command, key string) {
	t.Helper()
	cmd := exec.Command(shell, "-c", command)
	cmd.Env = append(os.Environ(), harness.EventKeyEnv+"="+key)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("%s hook: %v %q", shell, err, out)
	}
}

// Under bash, the wired command reports with builtins alone: the event is
// in the events directory, read as the agent's state, and fm-control never
// started. Both forms (claude's and codex's, and gemini's quiet one).
func TestABashHookReportsWithoutStartingFmControl(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash here")
	}
	task, w, store, calls := hookWorld(t)
	before := time.Now()
	runHook(t, "bash", w.HookFor("prompt-submitted").Shell, "k1")
	a, ok := store.ReadAgentState(task.ID, w.Gen)
	if !ok || a.State != state.ActivityBusy || a.At.Before(before.Truncate(time.Microsecond)) || time.Since(a.At) > time.Minute {
		t.Fatalf("after the bash hook: %+v ok=%v", a, ok)
	}
	runHook(t, "bash", w.HookFor("turn-finished").QuietShell(), "k1")
	if a, _ = store.ReadAgentState(task.ID, w.Gen); a.State != state.ActivityIdle || a.Turn.IsZero() {
		t.Fatalf("after the quiet bash hook: %+v", a)
	}
	if _, err := os.Stat(calls); err == nil {
		data, _ := os.ReadFile(calls)
		t.Fatalf("fm-control was started: %q", data)
	}
}

// Where the shell has no clock of its own (dash), the key is missing, or
// the file cannot be created, the hook starts fm-control as before.
func TestAHookFallsBackToFmControlWhenItCannotWriteItself(t *testing.T) {
	task, w, store, calls := hookWorld(t)
	runHook(t, "sh", "unset EPOCHREALTIME; "+w.HookFor("prompt-submitted").Shell, "k1")
	if _, err := exec.LookPath("bash"); err == nil {
		runHook(t, "bash", w.HookFor("waiting").Shell, "")
		if err := os.RemoveAll(store.AgentEventsDir(task.ID)); err != nil {
			t.Fatal(err)
		}
		runHook(t, "bash", w.HookFor("turn-finished").QuietShell(), "k1")
	}
	data, _ := os.ReadFile(calls)
	got := strings.Split(strings.TrimSpace(string(data)), "\n")
	want := []string{"prompt-submitted", "waiting", "turn-finished"}
	if _, err := exec.LookPath("bash"); err != nil {
		want = want[:1]
	}
	if len(got) != len(want) {
		t.Fatalf("fm-control calls %q, want one for each of %q", got, want)
	}
	for i, e := range want {
		if !strings.Contains(got[i], "agent-event") || !strings.Contains(got[i], " "+e+" --gen "+w.Gen) {
			t.Errorf("call %d = %q, want agent-event %s", i, got[i], e)
		}
	}
}
