package control

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/harness/records"
	"fmctl/phrase"
)

// waitView is one look at a task during a wait.
type waitView struct {
	obs   backends.Observation
	act   agentActivity
	turn  turnView  // read for --for done, once the agent is idle
	stall stallView // a busy agent with no progress for FM_STALL_AFTER
}

// Wait polls task id until cond holds or limit passes, without a lock and
// without writing. It refuses at once what no amount of waiting can reach,
// and anything it cannot call the task's own live agent: a stopped agent,
// an endpoint the multiplexer does not answer for, another program, a
// drifted endpoint. Exit 0 means the condition held and the agent was alive.
func (c *Controller) Wait(ctx context.Context, id, cond string, limit time.Duration) error {
	t, err := c.tasks().Open(id)
	if err != nil {
		return err
	}
	if cond == "dead" && !t.Ability.Classifier {
		return fault.Failed("task %s runs on the %s backend, which has no recovery-grade agent-state classifier, so an agent-free endpoint cannot be proven; nothing to wait on", t.ID, t.BackendName).Coded(fault.ENoClassifier)
	}
	var v waitView
	pause := c.idlePause(t.Store.AgentStatePath(id), t.Store.AgentEventsDir(id), t.Store.MetaPath(id))
	return c.poll(ctx, id, cond, limit, pause, func(waited time.Duration) (bool, error) {
		v = c.look(ctx, t)
		if ctx.Err() != nil { // poll says interrupted
			return false, nil
		}
		if cond == "done" && v.act.Word == actIdle {
			v.turn = v.act.lastTurn(t, v.obs)
		}
		done, err := reached(t, cond, v)
		if done {
			c.printReached(t, cond, v, waited)
		}
		return done, err
	}, func() error {
		return fault.Timeout("task %s was not %s within %s (state=%s activity=%s evidence=%s)", id, cond, limit, v.obs.State, v.act.Word, v.act.Evidence).
			With("id", id, "for", cond, "state", string(v.obs.State), "activity", v.act.Word, "evidence", v.act.Evidence)
	})
}

// poll runs look (given the time waited so far), pausing between looks,
// until it says done or fails, or limit passes, when it returns timedOut's error. A signal ends
// it as the wait's interruption.
func (c *Controller) poll(ctx context.Context, id, cond string, limit time.Duration, pause *idlePause, look func(time.Duration) (bool, error), timedOut func() error) error {
	start := time.Now()
	deadline := start.Add(limit)
	defer c.print.Waiting(fmt.Sprintf("waiting for task %s to be %s", id, cond), deadline)()
	for {
		done, err := look(time.Since(start))
		// A signal cancels the read under way, which then reads unreadable:
		// that is the wait's interruption, not the server's answer.
		if ctx.Err() != nil {
			return waitInterrupted(id)
		}
		if done || err != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return timedOut()
		}
		if err := pause.Sleep(ctx, left); err != nil {
			return waitInterrupted(id)
		}
	}
}

func waitInterrupted(id string) error {
	return fault.Failed("the wait for task %s was interrupted", id).Coded(fault.EInterrupted)
}

// look reads the endpoint and the agent's reports once.
func (c *Controller) look(ctx context.Context, t *task.Target) waitView {
	obs, screen := observe(ctx, t)
	now := time.Now()
	act := readActivity(t, obs, now, c.waits, screen)
	return waitView{obs: obs, act: act, stall: stallOf(t, obs, act.Word, now, c.tun.Control.StallAfter)}
}

// reached decides cond from one look. It refuses, rather than waits out,
// every state no wait can leave by itself or that is not the task's own
// live agent, so exit 0 never stands for a frozen or unreadable one.
func reached(t *task.Target, cond string, v waitView) (bool, error) {
	if err := refuseWaitState(t, cond, v.obs); err != nil {
		return false, err
	}
	if v.obs.State == backends.StateDead {
		return cond == "dead", nil
	}
	if cond == "dead" {
		return false, nil
	}
	if v.stall.Stalled && cond != actBusy {
		return false, stalled(t, cond, v)
	}
	if v.act.Evidence == evNone {
		return false, fault.Failed("no activity signal for harness %s, so task %s cannot be seen %s", orNone(oneLine(t.Family())), t.ID, cond).Coded(fault.ENoSignal).
			Hint("it reports no telemetry (state/%s.agent-state holds nothing from this incarnation) and has no screen signature", t.ID).
			Hint("wait --for dead still works")
	}
	want := cond
	if cond == "ready" { // an agent that reported itself ready: no turn runs
		want = actIdle
	}
	if cond == "done" {
		return turnDone(t, v)
	}
	return v.act.Word == want, nil
}

// turnDone is --for done: the agent is idle and its own record ends its
// newest turn completed. A turn the record ends failed or cancelled is no
// more waiting can change: exit 1 naming it. An idle agent whose record
// does not (yet) mark the end is waited on.
func turnDone(t *task.Target, v waitView) (bool, error) {
	if v.act.Word != actIdle || !v.turn.Ended {
		return false, nil
	}
	switch v.turn.Outcome {
	case records.Completed:
		return true, nil
	case records.Failed, records.Cancelled:
		err := fault.Failed("task %s's newest turn ended %s, per its %s record%s", t.ID, v.turn.Outcome, t.RecordedHarness, failedWith(v.turn.Error)).Coded(fault.ETurnNotCompleted).
			With("id", t.ID, "for", "done", "turn", string(v.turn.Outcome))
		if v.turn.Outcome == records.Failed {
			return false, err.Hint("its model call failed for good: fm-control read %s --record shows the error", t.ID)
		}
		return false, err.Hint("it was interrupted; to give it the work again: fm-send %s <text>", t.ID)
	}
	return false, nil
}

// stalled ends a wait on a busy agent that shows no progress: its turn
// may hang, or wait out a back-off that never ends, and waiting on would
// only run out the timeout. It has its own exit code, so a script can tell
// it from a timeout and look at the agent.
func stalled(t *task.Target, cond string, v waitView) error {
	return fault.New(fault.ClassStalled, "task %s is busy with no progress for %s (its own record unwritten, no report from it), so it may never be %s", t.ID, v.stall.For.Round(time.Second), cond).Coded(fault.EAgentStalled).
		With("id", t.ID, "for", cond, "state", string(v.obs.State), "activity", v.act.Word, "evidence", v.act.Evidence).
		Put(v.stall.facts()...).
		Hint("look at it: fm-control read %s (its screen), fm-control read %s --record (its conversation)", t.ID, t.ID).
		Hint("if it hangs, fm-control interrupt %s ends the turn", t.ID)
}

func failedWith(msg string) string {
	if msg == "" {
		return ""
	}
	return " (" + phrase.Printable(oneLine(msg)) + ")"
}

// refuseWaitState is the verdict on an endpoint state that ends a wait at
// once: every one but an attributed live agent, an agent-free endpoint, and
// (for dead) a live agent that may yet stop.
func refuseWaitState(t *task.Target, cond string, obs backends.Observation) error {
	id, ep := t.ID, phrase.Printable(t.Endpoint.Target)
	switch obs.State {
	case backends.StateAlive, backends.StateUnverified:
		if t.HasHarness && !t.Attributed(obs) {
			runs := "shows no process of its own " + t.Harness.Name + " agent"
			if len(obs.Names) > 0 {
				runs = "runs " + strings.Join(obs.Names, ",") + ", not the task's own " + t.Harness.Name + " agent"
			}
			return fault.Failed("task %s's endpoint %s %s (state: %s), so it cannot be %s", id, ep, runs, obs.State, cond).Coded(fault.EForeignAgent).
				Hint("look at the pane")
		}
		return nil
	case backends.StateDead:
		if cond != "dead" {
			return fault.Failed("task %s's endpoint %s has no agent (state: dead), so it will not be %s", id, ep, cond).Coded(fault.EAgentNotRunning).
				Hint("relaunch it first: %s", task.Relaunches(id, t.Kind))
		}
		return nil
	case backends.StateMissing:
		return fault.Failed("task %s's recorded endpoint %s is gone (state: missing), so there is nothing to wait on", id, ep).Coded(fault.EEndpointMissing).
			Hint("relaunch the task with fm-spawn %s --relaunch, or tear it down", id)
	case backends.StateDrifted:
		return fault.Failed("task %s's recorded endpoint %s drifted (%s)", id, ep, obs.Detail).Coded(fault.EEndpointDrifted).Hint("%s", t.DriftFix())
	case backends.StateSuspended:
		return fault.Failed("task %s's agent is stopped (state: suspended: %s), so it will not be %s", id, obs.Detail, cond).Coded(fault.EAgentSuspended).
			Hint("a stopped agent changes nothing until it is resumed: fg in its pane, or kill -CONT")
	case backends.StateUnreadable:
		return fault.Failed("task %s's endpoint %s could not be read, so whether its agent is %s is unknown", id, ep, cond).Coded(fault.EEndpointUnreadable).With("detail", obs.Detail).
			Hint("%s", obs.Detail).
			Hint("check that the %s server is up and answers", t.BackendName)
	}
	return fault.Failed("task %s's endpoint %s reads '%s' (%s), not the task's own agent, so it cannot be %s", id, ep, obs.State, obs.Detail, cond).Coded(fault.EForeignAgent).
		Hint("look at the pane")
}

func (c *Controller) printReached(t *task.Target, cond string, v waitView, waited time.Duration) {
	out := cli.Outcome{Word: "reached", ID: t.ID}
	out.Add("for", cond).Add("state", string(v.obs.State)).Add("activity", v.act.Word)
	if v.act.For != "" {
		out.Add("waiting_for", v.act.For)
	}
	out.Add("evidence", v.act.Evidence).
		Put(fault.Fact{Key: "waited_ms", Value: waited.Milliseconds(), Token: "waited", Text: fmt.Sprintf("%.2fs", waited.Seconds())})
	c.print.Outcome(out)
}
