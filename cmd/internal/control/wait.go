package control

import (
	"context"
	"fmt"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/task"
	"fmctl/state"
)

// waitMaxPause caps the wait's backoff (which starts at backends.MinPoll,
// so a condition about to hold is seen within milliseconds): a long wait
// costs one multiplexer call four times a second.
const waitMaxPause = 250 * time.Millisecond

// waitView is one look at a task during a wait.
type waitView struct {
	obs      backends.Observation
	activity string // from current telemetry; "" when there is none
}

// Wait polls task id until cond holds or limit passes, without a lock and
// without writing. It refuses at once what no amount of waiting can reach.
func (c *Controller) Wait(ctx context.Context, id, cond string, limit time.Duration) error {
	t, err := c.tasks().Open(id)
	if err != nil {
		return err
	}
	if err := c.waitPossible(t, cond); err != nil {
		return err
	}
	start := time.Now()
	deadline := start.Add(limit)
	defer c.print.Waiting(fmt.Sprintf("waiting for task %s to be %s", id, cond), deadline)()
	pause := backends.Backoff{Max: waitMaxPause}
	for {
		v := look(ctx, t)
		done, err := reached(t, cond, v)
		if err != nil {
			return err
		}
		if done {
			c.printReached(t, cond, v, time.Since(start))
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return cli.Timeout("task %s was not %s within %s (state=%s activity=%s)", id, cond, limit, v.obs.State, orUnknown(v.activity)).
				With("id", id, "for", cond, "state", string(v.obs.State), "activity", orUnknown(v.activity))
		}
		if err := backends.Sleep(ctx, min(pause.Next(), left)); err != nil {
			return cli.Failed("the wait for task %s was interrupted", id).Coded(cli.EInterrupted)
		}
	}
}

// waitPossible refuses a condition the task has no signal for: dead needs a
// classifier that can prove an endpoint agent-free, the others the agent's
// own telemetry.
func (c *Controller) waitPossible(t *task.Target, cond string) error {
	if cond == "dead" {
		if !t.Ability.Classifier {
			return cli.Failed("task %s runs on the %s backend, which has no recovery-grade agent-state classifier, so an agent-free endpoint cannot be proven; nothing to wait on", t.ID, t.BackendName).Coded(cli.ENoClassifier)
		}
		return nil
	}
	// Until the capability table declares each harness's telemetry, a
	// report from this incarnation is what proves its agent reports at all.
	if _, reported := currentActivity(t); reported {
		return nil
	}
	return cli.Failed("no activity signal for harness %s: it reports no telemetry (state/%s.agent-state holds nothing from this incarnation) and has no screen signature, so task %s cannot be seen %s; wait --for dead still works", orNone(oneLine(t.Family())), t.ID, t.ID, cond).Coded(cli.ENoSignal)
}

// look reads the endpoint and the current telemetry once.
func look(ctx context.Context, t *task.Target) waitView {
	v := waitView{obs: t.Backend.AgentState(ctx, t.Endpoint)}
	v.activity, _ = currentActivity(t)
	return v
}

// reached decides cond from one look, refusing a state no wait can leave
// (a gone or drifted endpoint, an agent that is not there for an activity).
func reached(t *task.Target, cond string, v waitView) (bool, error) {
	switch v.obs.State {
	case backends.StateMissing:
		return false, cli.Failed("task %s's recorded endpoint %s is gone (state: missing), so there is nothing to wait on; reconcile the task first", t.ID, t.Endpoint.Target).Coded(cli.EEndpointMissing)
	case backends.StateDrifted:
		return false, cli.Failed("task %s's recorded endpoint %s drifted (%s); %s before waiting on it", t.ID, t.Endpoint.Target, v.obs.Detail, t.DriftFix()).Coded(cli.EEndpointDrifted)
	case backends.StateDead:
		if cond != "dead" {
			return false, cli.Failed("task %s's endpoint %s has no agent (state: dead), so it will not be %s; relaunch it first", t.ID, t.Endpoint.Target, cond).Coded(cli.EAgentNotRunning)
		}
		return true, nil
	}
	switch cond {
	case "dead":
		return false, nil
	case "ready":
		// An agent that reported itself ready, in an endpoint that is not
		// provably something else (unverified: zellij cannot classify).
		alive := v.obs.State == backends.StateAlive || v.obs.State == backends.StateUnverified
		return alive && v.activity == state.ActivityIdle, nil
	}
	return v.activity == cond, nil
}

func (c *Controller) printReached(t *task.Target, cond string, v waitView, waited time.Duration) {
	out := cli.Outcome{Word: "reached", ID: t.ID}
	out.Add("for", cond).Add("state", string(v.obs.State)).Add("activity", orUnknown(v.activity)).
		Put(cli.Fact{Key: "waited_ms", Value: waited.Milliseconds(), Token: "waited", Text: fmt.Sprintf("%.2fs", waited.Seconds())})
	c.print.Outcome(out)
}

func orUnknown(s string) string {
	if s == "" {
		return state.ActivityUnknown
	}
	return s
}

// currentActivity is what the agent's own telemetry of the incarnation the
// record names (spawn_gen) says: busy, waiting, or idle (ready or idle: no
// turn runs); "" for an ended session. reported is false when there is no
// such report (none, a stale incarnation's, or unreadable).
func currentActivity(t *task.Target) (activity string, reported bool) {
	a, ok := t.Store.ReadAgentState(t.ID, t.Task.Record.SpawnGen())
	if !ok {
		return "", false
	}
	switch a.State {
	case state.ActivityBusy, state.ActivityWaiting:
		return a.State, true
	case state.ActivityReady, state.ActivityIdle:
		return state.ActivityIdle, true
	}
	return "", true
}
