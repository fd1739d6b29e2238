package teardown

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"fmctl/backends"
	"fmctl/backends/git"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/lifecycle"
	"fmctl/cmd/internal/retire"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/state"
)

// Runner tears tasks down for one invocation.
type Runner struct {
	Env      config.Env
	Tunables config.Tunables
	Runner   backends.Runner
	Print    cli.Printer
}

func (r Runner) git(ctx context.Context, dir string, args ...string) (string, error) {
	return git.Run(ctx, r.Runner, r.Tunables.GitTimeout, dir, args...)
}

// Teardown runs the whole teardown of task id under its lifecycle lock.
func (r Runner) Teardown(ctx context.Context, id string, force bool) error {
	opener := task.Opener{Tool: "fm-teardown", Env: r.Env, Tunables: r.Tunables, Runner: r.Runner}
	t, lock, err := opener.OpenLocked(id)
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := refuseUnsettled(t); err != nil {
		return err
	}
	plan, err := r.judge(ctx, t, force)
	if err != nil {
		return err
	}
	x := &retire.Tx{Plan: plan, Store: t.Store, DataDir: t.Home.Data, Git: r.git, Target: t}
	if err := x.Enter(state.PhaseJudged); err != nil {
		return fault.Failed("%v; nothing was changed", err)
	}
	if err := x.Enter(state.PhaseStopping); err != nil {
		return r.abandon(x, fault.Failed("%v; nothing was changed", err))
	}
	agent, err := r.stop(ctx, t, force)
	if err == nil {
		err = state.Inject("stop")
	}
	if err != nil {
		return r.abandon(x, err)
	}
	x.Agent = agent
	left, err := retire.Recheck(ctx, r.git, plan, harness.WorktreeWiring())
	if err == nil && left != "" {
		err = fault.Failed("task %s's agent was stopped (agent=%s), but its worktree now holds work that has not landed: %s; its record, endpoint and worktree are kept", t.ID, agent, left).Coded(fault.ENotLanded).
			Hint("land the work, then tear down again: fm-teardown %s", t.ID).
			Hint("or discard it: fm-teardown %s --force", t.ID)
	}
	if err != nil {
		return r.abandon(x, err)
	}
	done, err := x.Finish(ctx, state.PhaseClosing)
	if err != nil {
		return fault.Failed("task %s's teardown stopped part-way (its agent is stopped: agent=%s): %v", t.ID, agent, err).
			Hint("finish it with fm-control recover %s", t.ID)
	}
	r.Print.Outcome(outcome(t, plan, agent, done))
	return nil
}

// refuseUnsettled refuses a task an interrupted spawn, relaunch or
// teardown left unsettled: recover settles it first.
func refuseUnsettled(t *task.Target) error {
	if _, err := os.Lstat(t.Store.SpawnIntentPath(t.ID)); err == nil {
		return fault.Failed("task %s has an interrupted fm-spawn (%s); nothing was changed", t.ID, t.Store.SpawnIntentPath(t.ID)).Coded(fault.ETornSpawn).
			Hint("settle it with fm-control recover %s, then tear down again", t.ID)
	}
	return t.Store.RefuseTorn(t.ID)
}

// abandon ends a teardown refused or failed before anything it cannot put
// back was done, and returns why.
func (r Runner) abandon(x *retire.Tx, why error) error {
	if err := x.Abandon(); err != nil {
		r.Print.Warn("%v", err)
	}
	return why
}

// stop proves the agent gone the way fm-control exit does; an agent
// already stopped, or an endpoint already gone, is fine. Under force, an
// agent exit cannot prove stopped is killed with its endpoint.
func (r Runner) stop(ctx context.Context, t *task.Target, force bool) (string, error) {
	if !t.Ability.Classifier {
		if force {
			return r.kill(ctx, t, fmt.Sprintf("the %s backend cannot prove an agent stopped", t.BackendName))
		}
		return "", withForce(lifecycle.RequireClassifier(t, "teardown"), t, "kill its endpoint without that proof")
	}
	obs := t.Backend.AgentState(ctx, t.Endpoint)
	switch obs.State {
	case backends.StateMissing:
		return "already-gone", nil
	case backends.StateDead:
		return "already-stopped", r.retireWiring(t)
	case backends.StateAlive:
	default:
		return "", lifecycle.RefuseState(t, "exit", obs)
	}
	if err := t.RequireHarness("fm-teardown"); err != nil {
		if force {
			return r.kill(ctx, t, err.Error())
		}
		return "", withForce(err, t, "kill its endpoint, agent and all")
	}
	res, err := lifecycle.New(r.Tunables, r.Print).Stop(ctx, t, true, false)
	if err != nil {
		if force {
			return r.kill(ctx, t, err.Error())
		}
		return "", withForce(err, t, "kill its endpoint, agent and all")
	}
	if note := res.LeftNotice(t); note != "" {
		r.Print.Notice("%s", note)
	}
	agent := string(res.Result)
	if res.Result == lifecycle.ExitAlreadyMissing {
		agent = "already-gone"
	}
	return agent, r.retireWiring(t)
}

// kill closes the endpoint of an agent exit could not stop (--force only).
func (r Runner) kill(ctx context.Context, t *task.Target, why string) (string, error) {
	if err := t.Backend.Kill(ctx, t.Endpoint); err != nil && t.Backend.AgentState(ctx, t.Endpoint).State != backends.StateMissing {
		return "", fault.Failed("task %s's agent could not be stopped (%s), and its endpoint %s could not be killed: %v; nothing else was changed", t.ID, why, t.Endpoint.Target, backends.StderrOf(err))
	}
	r.Print.Notice("task %s: %s; --force killed its endpoint %s", t.ID, strings.TrimSuffix(why, "."), t.Endpoint.Target)
	return "killed", r.retireWiring(t)
}

func (r Runner) retireWiring(t *task.Target) error {
	if err := t.RetireWiring(); err != nil {
		r.Print.Notice("task %s's agent stopped, but its telemetry wiring was not retired: %v", t.ID, err)
	}
	return nil
}

// withForce adds the --force way out to a refusal of the stop.
func withForce(err error, t *task.Target, does string) error {
	var e *fault.Error
	if !errors.As(err, &e) {
		e = fault.Failed("%w", err)
	}
	return e.Hint("nothing was torn down; to %s: fm-teardown %s --force", does, t.ID)
}

func outcome(t *task.Target, p retire.Plan, agent string, d retire.Done) cli.Outcome {
	out := cli.Outcome{Word: "torn-down", ID: t.ID}
	out.Add("harness", t.Family()).Add("kind", string(t.Kind)).Add("agent", agent).
		Add("endpoint", d.Endpoint).Add("worktree", d.Worktree).Add("branch", d.Branch).
		Add("archive", p.Archive)
	if p.Force {
		out.Add("discarded", p.Discards)
	}
	return out
}
