package lifecycle

import (
	"context"
	"fmt"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
)

// ExitResult names how an agent ended up stopped.
type ExitResult string

const (
	ExitStopped        ExitResult = "stopped"
	ExitAlreadyStopped ExitResult = "already-stopped"
	ExitAlreadyMissing ExitResult = "already-stopped-missing" // relaunch only: the endpoint is gone too
)

// Stopped is what a stop did: how the agent ended up stopped, and which
// of the messages fm-send had left queued behind its turn (submit=queued)
// its record never took, read once the agent was gone.
type Stopped struct {
	Result  ExitResult
	Untaken []string
	// Left is the harness's daemon the agent had started, which outlived
	// it by design (cline's hub).
	Left []Leftover
}

// RequireClassifier refuses a verb whose postcondition needs a
// recovery-grade classifier on a backend that has none.
func RequireClassifier(t *task.Target, verb string) error {
	if t.Ability.Classifier {
		return nil
	}
	return fault.Failed("task %s runs on the %s backend, which has no recovery-grade agent-state classifier, so '%s' cannot prove the agent actually stopped", t.ID, t.BackendName, verb).Coded(fault.ENoClassifier)
}

// Stop is the exit verb's body, shared with relaunch. allowMissing accepts an
// endpoint that is already gone (relaunch recreates nothing, but an absent
// agent is stopped).
//
// inputHeld says the caller (relaunch) already holds the task's input lock,
// which it keeps past the stop until the new agent is up; otherwise stop takes
// it here, before reading the state, so the read and the keys are one step.
func (c *Verbs) Stop(ctx context.Context, t *task.Target, allowMissing, inputHeld bool) (Stopped, error) {
	if err := CheckKeys(t); err != nil {
		return Stopped{}, err
	}
	if !inputHeld {
		lock, err := c.LockDelivery(t)
		if err != nil {
			return Stopped{}, err
		}
		defer lock.Release()
	}
	obs := t.Backend.AgentState(ctx, t.Endpoint)
	switch obs.State {
	case backends.StateDead:
		return Stopped{Result: ExitAlreadyStopped}, nil
	case backends.StateMissing:
		if allowMissing {
			return Stopped{Result: ExitAlreadyMissing}, nil
		}
		return Stopped{}, RefuseState(t, "exit", obs)
	case backends.StateAlive:
		if err := t.Gate(obs, "fm-control"); err != nil {
			return Stopped{}, err
		}
	default:
		return Stopped{}, RefuseState(t, "exit", obs)
	}
	// The record is opened while the agent's process is there to find it
	// by; it is read for the queue again once the process is gone.
	turn := c.readTurn(ctx, t, &obs)
	queue := pendingQueue(t, turn.record)
	// Read before the exit, while the agent's process tree still shows
	// the daemon it started.
	daemons := agentDaemons(ctx, t, obs.AgentPID)
	res, err := c.stopAlive(ctx, t, obs, turn, allowMissing)
	if err == nil && res == ExitStopped {
		return Stopped{Result: res, Untaken: queue.untaken(), Left: daemonsLeft(ctx, t, daemons)}, nil
	}
	return Stopped{Result: res}, err
}

// stopAlive stops an agent read alive (obs, its record before as turn).
func (c *Verbs) stopAlive(ctx context.Context, t *task.Target, obs backends.Observation, turn turnBefore, allowMissing bool) (ExitResult, error) {
	first, err := c.interruptFirst(ctx, t, obs, turn)
	if err != nil {
		return "", err
	}
	if first.stopped {
		return ExitStopped, c.RetireBusy(t)
	}
	interruptNote, turnUnproven := first.note, first.turnUnproven

	o := deliver.DefaultOptions()
	o.Retries = c.waits.ExitRetries
	o.Popup = true
	o.EndsAgent = true
	gone, err := c.prepareExitComposer(ctx, t, &o)
	if err != nil {
		return "", err
	}
	if gone {
		return ExitStopped, c.RetireBusy(t)
	}
	typedAt := time.Now()
	res := deliver.Submit(ctx, t.Backend, t.Endpoint, t.Harness.ExitCommand, o)
	// An exit command the composer never let go of is fmctl's own
	// leftover, which the next fm-send may clear (state.Typed).
	_ = t.Store.RecordTyped(t.ID, res.Typed(t.Harness.ExitCommand, typedAt))
	if res.Verdict == deliver.SendFailed && ctx.Err() != nil {
		// A signal (cli.Run) cut the typing short, not the multiplexer.
		return "", fault.Failed("the exit of task %s was interrupted while its exit command was typed; interrupt=%s", t.ID, interruptNote).Coded(fault.EInterrupted).
			Hint("whether it stopped: fm-control status %s", t.ID)
	}
	if res.Verdict == deliver.SendFailed {
		return "", fault.Failed("the exit command could not be sent to task %s on %s (%v); interrupt=%s", t.ID, t.BackendName, backends.StderrOf(res.Err), interruptNote).Coded(fault.EDeliveryFailed)
	}
	final, ok := c.waitExited(ctx, t, o)
	if ok && turnUnproven {
		_ = c.RetireBusy(t)
		return "", fault.Unconfirmed("exit-delivered %s interrupt=%s exit-command=delivered agent-state=dead exit=unconfirmed background-turn=unconfirmed", t.ID, interruptNote).
			Hint("the %s TUI is gone, but %s keeps a running turn going after %s (in its background app-server daemon)", t.Harness.Name, t.Harness.Name, t.Harness.ExitCommand).
			Hint("nothing from the agent proved the turn ended after the interrupt: look at the worktree before relaunching").
			With("id", t.ID, "exit_result", "unconfirmed", "state", "dead", "interrupt", interruptNote, "background_turn", "unconfirmed")
	}
	if ok {
		return ExitStopped, c.RetireBusy(t)
	}
	if final.State == backends.StateMissing && allowMissing {
		return ExitAlreadyMissing, c.RetireBusy(t)
	}
	e := fault.Failed("exit-delivered %s interrupt=%s exit-command=delivered agent-state=%s exit=unconfirmed; the agent did not stop within %s",
		t.ID, interruptNote, final.State, Seconds(c.waits.Exit)).Coded(fault.ENotStopped)
	if ctx.Err() != nil {
		// A signal ended the wait (cli.Run), not the wait's bound.
		e = fault.Failed("exit-delivered %s interrupt=%s exit-command=delivered agent-state=%s exit=unconfirmed; the wait for the agent to stop was interrupted",
			t.ID, interruptNote, final.State).Coded(fault.EInterrupted).
			Hint("whether it stopped since: fm-control status %s", t.ID)
	}
	if res.Verdict == deliver.Pending {
		e.Hint("its composer still holds %s (the submit was never confirmed): clear it before sending anything else", t.Harness.ExitCommand)
	}
	if final.State == backends.StateAlive && ctx.Err() == nil {
		switch queued, withdrawn := withdrawQueuedExit(ctx, t, c.waits.Backoff()); {
		case withdrawn:
			e.Hint("the agent queued %s behind a turn it was still ending, and it was taken back out of its queue, so it will not end the agent later", t.Harness.ExitCommand).With("exit_command", "withdrawn")
		case queued:
			e.Hint("the agent queued %s behind a turn it is still ending and it could not be taken back: it may end the agent when that turn is over", t.Harness.ExitCommand).With("exit_command", "queued")
		}
	}
	return "", e.With("id", t.ID, "exit_result", "unconfirmed", "state", string(final.State), "interrupt", interruptNote)
}

// interrupted is what interrupting an agent before its exit command did.
type interrupted struct {
	note         string // the interrupt= value of the outcome
	turnUnproven bool   // a turn may live on after the exit command
	stopped      bool   // the interrupt alone stopped the agent
}

// interruptFirst interrupts an agent that is mid-turn (by its own record,
// its telemetry or the multiplexer) before its exit command, with the
// interrupt verb's proof and repeats, and proves it still there to exit. A
// turn the record still shows running is left to the exit command, which
// ends it with the agent; the note says so.
func (c *Verbs) interruptFirst(ctx context.Context, t *task.Target, obs backends.Observation, turn turnBefore) (interrupted, error) {
	if !turn.running && !busyNow(t, obs) && !busyBeforeExit(t, turn) && !screenHoldsTurn(ctx, t) {
		return interrupted{note: "not-needed"}, nil
	}
	since := time.Now()
	ack, err := c.deliverInterrupt(ctx, t, func() turnRecord { return turn.record })
	if err != nil {
		return interrupted{}, err
	}
	after := t.Backend.AgentState(ctx, t.Endpoint)
	if after.State == backends.StateAlive {
		verdict, err := c.confirmCancel(ctx, t, turn, true, ack, since, InterruptGate(t), nil)
		if verdict.Rounds > 1 || err != nil {
			after = t.Backend.AgentState(ctx, t.Endpoint)
		}
		if err != nil && after.State == backends.StateAlive {
			return interrupted{}, err
		}
		if after.State == backends.StateAlive {
			note := "delivered verified=agent-alive cancel=" + verdict.Cancel + " proof=" + verdict.Proof
			if verdict.Running {
				note += " turn=running"
			}
			return interrupted{note: note, turnUnproven: verdict.Cancel != CancelConfirmed && t.Harness.ExitKeepsTurn()}, nil
		}
	}
	switch after.State {
	case backends.StateDead:
		return interrupted{stopped: true}, nil
	case backends.StateMissing:
		return interrupted{}, fault.Failed("task %s's endpoint disappeared after interrupt delivery, before its exit command", t.ID).Coded(fault.EEndpointMissing).
			Hint("relaunch it with fm-spawn %s --relaunch, or end it with fm-teardown %s", t.ID, t.ID)
	}
	return interrupted{}, fault.Failed("task %s's agent reads '%s' after its interrupt key; refusing to type its exit command into an unattributed endpoint (interrupt=delivered cancel=%s)", t.ID, after.State, ack).Coded(fault.EAgentUnverified)
}

func (c *Verbs) RetireBusy(t *task.Target) error {
	if err := t.Store.RetireBusy(t.ID); err != nil {
		return fault.Failed("task %s's agent stopped, but its busy record could not be retired: %v", t.ID, err)
	}
	return nil
}

// stuckExitAfter is how long after its exit command an agent that lists
// the command in its queue, behind no turn, is taken to hold it there for
// good: copilot 1.0.102 queues a /exit typed while a cancelled turn winds
// down (its record and its screen already say the turn is over) and runs
// that queue only at its next submit (tests/captures/notes-copilot.md). A
// live agent runs an exit command it took well within it.
const stuckExitAfter = time.Second

// waitExited polls the classifier until the agent is gone or the exit wait
// passes, returning the last observation. An exit command the agent holds
// in its queue behind no turn (exitQueuedIdle) is submitted once more, to
// the agent proven there, which runs its queue and so the command.
func (c *Verbs) waitExited(ctx context.Context, t *task.Target, o deliver.Options) (backends.Observation, bool) {
	typed := time.Now()
	deadline := typed.Add(c.waits.Exit)
	poll := c.waits.Backoff()
	retyped := false
	defer c.print.Waiting(fmt.Sprintf("waiting for task %s's agent to be %s", t.ID, backends.StateDead), deadline)()
	for {
		obs := t.Backend.AgentState(ctx, t.Endpoint)
		if obs.State == backends.StateDead {
			return obs, true
		}
		if time.Now().After(deadline) {
			return obs, false
		}
		if !retyped && obs.State == backends.StateAlive && time.Since(typed) >= stuckExitAfter && exitQueuedIdle(ctx, t) {
			retyped = true
			if t.Gate(obs, "fm-control") == nil {
				at := time.Now()
				res := deliver.Submit(ctx, t.Backend, t.Endpoint, t.Harness.ExitCommand, o)
				_ = t.Store.RecordTyped(t.ID, res.Typed(t.Harness.ExitCommand, at))
			}
		}
		if poll.Sleep(ctx) != nil {
			return obs, false
		}
	}
}

// exitQueuedIdle reads the screen: the harness's exit command listed in its
// queue while no turn runs (no busy mark, no dialog) and the composer is
// empty, so a second exit command is typed into nothing else.
func exitQueuedIdle(ctx context.Context, t *task.Target) bool {
	st, queued := exitQueued(ctx, t)
	return queued && st.Composer == harness.ComposerEmpty && !st.Busy && st.Dialog == "" && !turnRuns(ctx, t)
}

func Seconds(d time.Duration) string {
	return fmt.Sprintf("%gs", d.Seconds())
}

// busyNow says an agent is mid-turn (or held by a prompt) and must be
// interrupted before its exit command: the recorded busy state says so, or
// the multiplexer's own signal does (herdr's agent_status working or
// blocked), which needs no hook in the agent.
func busyNow(t *task.Target, obs backends.Observation) bool {
	return t.Store.BusyState(t.ID) == "busy" || obs.Turn.Busy()
}

// screenHoldsTurn says the agent's screen shows a turn its report may not:
// a dialog it waits at (a permission prompt; claude's hook comes ~6 s after
// the dialog, and the exit command typed there would go to the dialog), or
// a busy mark (pi's retry loader, drawn after its extension already
// reported the failed attempt's end, where /quit did not end it). Either
// way the interrupt goes first.
func screenHoldsTurn(ctx context.Context, t *task.Target) bool {
	sig, ok := t.Harness.Screen()
	if !ok {
		return false
	}
	st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig)
	if err != nil {
		return false
	}
	_, waits := sig.WaitingAt(st)
	return st.Busy || waits
}

// turnRuns reads the multiplexer's own signal, where the backend has one:
// a working agent is busy even when its screen shows no busy mark.
func turnRuns(ctx context.Context, t *task.Target) bool {
	tr, ok := t.Backend.(backends.TurnReader)
	return ok && tr.Turn(ctx, t.Endpoint) == backends.TurnWorking
}
