package smoke

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/backends/zellij"
	"fmctl/harness"
)

// TestZellijSmoke drives the zellij adapter against a real zellij, on a
// throwaway background session it creates and deletes. It runs only when a
// zellij 0.44 or newer is on PATH.
func TestZellijSmoke(t *testing.T) {
	bin := realZellij(t)
	session := fmt.Sprintf("fmctl-smoke-%d", os.Getpid())
	t.Cleanup(func() { deleteZellijSmokeSession(t, bin, session) })

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	z := zellij.New(backends.NewExecRunner(""), zellij.Options{Binary: bin, DefaultSession: session})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fields, err := z.Create(ctx, backends.CreateSpec{TaskID: "smoke", Label: "fm-smoke", Dir: dir})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	ep := backends.Endpoint{Backend: "zellij", TaskID: "smoke", Fields: map[string]string{}}
	for _, f := range fields {
		ep.Fields[f.Key] = f.Value
	}
	ep.Target = ep.Fields["window"]
	if err := z.ValidateRecord(ep); err != nil {
		t.Fatalf("Create returned a record ValidateRecord refuses: %v (%v)", err, fields)
	}
	// The pane pid is inferred from the environment zellij gives the pane:
	// on a real server it must be the pane's own shell, started in dir.
	pid := ep.Fields["pane_pid"]
	if pid == "" {
		t.Fatalf("Create recorded no pane_pid: %v", fields)
	}
	if cwd, err := os.Readlink("/proc/" + pid + "/cwd"); err != nil || cwd != dir {
		t.Fatalf("pane_pid %s runs in %q (%v), want the pane's directory %s", pid, cwd, err, dir)
	}
	if _, err := z.Create(ctx, backends.CreateSpec{TaskID: "smoke", Label: "fm-smoke", Dir: dir}); err == nil {
		t.Fatal("a second tab with the same label was created")
	}

	if obs := z.AgentState(ctx, ep); obs.State != backends.StateUnverified {
		t.Fatalf("AgentState of a fresh pane: %+v", obs)
	}
	zellijEventually(t, "pane cwd is the created directory", func() (bool, string) {
		got, err := z.CurrentPath(ctx, ep)
		return err == nil && got == dir, fmt.Sprintf("%q, %v", got, err)
	})

	marker := fmt.Sprintf("smoke%d", time.Now().UnixNano())
	if err := z.SendText(ctx, ep, "echo one-"+marker+"\necho two-"+marker); err != nil {
		t.Fatalf("SendText: %v", err)
	}
	if err := z.SendKey(ctx, ep, harness.KeyEnter); err != nil {
		t.Fatalf("SendKey Enter: %v", err)
	}
	zellijEventually(t, "both pasted lines ran", func() (bool, string) {
		s, err := z.Capture(ctx, ep)
		if err != nil {
			return false, err.Error()
		}
		seen := map[string]bool{}
		for _, l := range s.Lines {
			seen[strings.TrimSpace(l)] = true
		}
		return seen["one-"+marker] && seen["two-"+marker], strings.Join(s.Lines, "\n")
	})
	for _, k := range []harness.Key{harness.KeyEscape, harness.KeyCtrlC, harness.KeyCtrlU} {
		if err := z.SendKey(ctx, ep, k); err != nil {
			t.Fatalf("SendKey %s: %v", k, err)
		}
	}

	if err := z.Kill(ctx, ep); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	zellijEventually(t, "killed endpoint reads missing", func() (bool, string) {
		obs := z.AgentState(ctx, ep)
		return obs.State == backends.StateMissing, fmt.Sprintf("%+v", obs)
	})
}

// realZellij skips unless PATH has a zellij that reports version 0.44 or
// newer; the fake rejects --version, so it never passes for a real one.
func realZellij(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("zellij")
	if err != nil {
		t.Skip("skip: zellij not found on PATH; this smoke test needs a real zellij 0.44 or newer")
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Skipf("skip: %s --version failed (%v); not a real zellij", bin, err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "zellij" {
		t.Skipf("skip: %s --version printed %q; not a real zellij", bin, out)
	}
	parts := strings.SplitN(f[1], ".", 3)
	major, _ := strconv.Atoi(parts[0])
	minor := 0
	if len(parts) > 1 {
		minor, _ = strconv.Atoi(parts[1])
	}
	if major == 0 && minor < 44 {
		t.Skipf("skip: zellij %s is older than 0.44, the adapter's floor", f[1])
	}
	return bin
}

// deleteZellijSmokeSession removes only the session this test named, by its exact
// name, never with kill-all-sessions or delete-all-sessions.
func deleteZellijSmokeSession(t *testing.T, bin, session string) {
	if !strings.HasPrefix(session, "fmctl-smoke-") {
		t.Errorf("refusing to delete zellij session %q: not a smoke-test session", session)
		return
	}
	if out, err := exec.Command(bin, "delete-session", "--force", session).CombinedOutput(); err != nil {
		t.Logf("zellij delete-session --force %s: %v\n%s", session, err, out)
	}
}

func zellijEventually(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var ok bool
		if ok, last = check(); ok {
			return
		}
	}
	t.Fatalf("%s: not within 15s; last: %s", what, last)
}
