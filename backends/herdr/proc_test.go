package herdr

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fmctl/backends"
	"fmctl/tests/stoppedproc"
)

// ctrlZ sends Ctrl+Z through the fake as herdr's CLI would (fmctl itself
// never sends it), stopping the pane's agent.
func (fx *herdrFixture) ctrlZ(ep backends.Endpoint) {
	fx.t.Helper()
	session, pane, _ := SplitTarget(ep.Target)
	if _, err := fx.runs.Run(context.Background(), backends.Cmd{Path: fx.bin, Args: []string{"pane", "send-keys", "--session", session, pane, "ctrl+z"}}); err != nil {
		fx.t.Fatal(err)
	}
}

func (fx *herdrFixture) shellPID(pid int) {
	if err := os.WriteFile(filepath.Join(fx.dir, "shell-pid"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		fx.t.Fatal(err)
	}
}

// newStoppedFixture is a fixture with one fresh pane and a real stand-in
// shell whose child, named agent, is stopped; the tree ends with the test.
func newStoppedFixture(t *testing.T, agent string) (*herdrFixture, backends.Endpoint, *stoppedproc.Tree) {
	tree, err := stoppedproc.Start(agent)
	if err != nil {
		t.Skipf("no stand-in process tree: %v", err)
	}
	t.Cleanup(tree.Close)
	fx := newHerdrFixture(t)
	return fx, fx.create("fm-t1", t.TempDir()), tree
}

func TestHerdrTurnAndSuspended(t *testing.T) {
	// The fake's agent writes its CLI's record under HOME: never the user's.
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()

	t.Run("backends.Turn", func(t *testing.T) {
		fx := newHerdrFixture(t)
		ep := fx.create("fm-t1", t.TempDir())
		if got := fx.h.Turn(ctx, ep); got != backends.TurnUnknown {
			t.Errorf("a shell pane's turn = %q, want unknown", got)
		}
		fx.submit(ep, "claude")
		if got := fx.h.Turn(ctx, ep); got != backends.TurnIdle {
			t.Errorf("an idle agent's turn = %q", got)
		}
		fx.touch("turns")
		fx.submit(ep, "hello")
		obs := fx.h.AgentState(ctx, ep)
		if got := fx.h.Turn(ctx, ep); got != backends.TurnWorking || obs.Turn != backends.TurnWorking || !obs.Turn.Busy() {
			t.Errorf("after a submitted prompt: backends.Turn = %q, observation %+v", got, obs)
		}
	})

	t.Run("StoppedAgentIsSuspendedNotDead", func(t *testing.T) {
		fx, ep, tree := newStoppedFixture(t, "claude")
		fx.submit(ep, "claude")
		fx.ctrlZ(ep)
		// herdr gives no shell pid: nothing runs in the pane to be stopped.
		if obs := fx.h.AgentState(ctx, ep); obs.State != backends.StateDead {
			t.Errorf("no shell pid: %+v", obs)
		}
		fx.shellPID(tree.Shell)
		obs := fx.h.AgentState(ctx, ep)
		if obs.State != backends.StateSuspended || len(obs.Names) != 1 || obs.Names[0] != "claude" || !strings.Contains(obs.Detail, strconv.Itoa(tree.Agent)) {
			t.Errorf("stopped agent under the shell: %+v", obs)
		}
		// A registration herdr keeps for the stopped agent does not make it alive.
		fx.touch("keeps-registration")
		if obs := fx.h.AgentState(ctx, ep); obs.State != backends.StateSuspended {
			t.Errorf("registered but stopped: %+v", obs)
		}
	})

	t.Run("ShellWithoutStoppedAgentIsDead", func(t *testing.T) {
		fx, ep, tree := newStoppedFixture(t, "vim")
		fx.shellPID(tree.Shell)
		if obs := fx.h.AgentState(ctx, ep); obs.State != backends.StateDead {
			t.Errorf("a stopped non-agent job: %+v", obs)
		}
	})

	t.Run("UnreadableShellFailsClosed", func(t *testing.T) {
		fx := newHerdrFixture(t)
		ep := fx.create("fm-t1", t.TempDir())
		fx.shellPID(1 << 30) // beyond any pid_max: not a process here
		if obs := fx.h.AgentState(ctx, ep); obs.State != backends.StateUnreadable || !strings.Contains(obs.Detail, "cannot be ruled out") {
			t.Errorf("unreadable shell pid: %+v", obs)
		}
		// A stale registration with no shell pid cannot be called dead either.
		os.Remove(filepath.Join(fx.dir, "shell-pid"))
		fx.submit(ep, "claude")
		fx.touch("keeps-registration")
		fx.ctrlZ(ep)
		if obs := fx.h.AgentState(ctx, ep); obs.State != backends.StateUnreadable || !strings.Contains(obs.Detail, "foreground is bash") {
			t.Errorf("stale registration, no shell pid: %+v", obs)
		}
	})
}
