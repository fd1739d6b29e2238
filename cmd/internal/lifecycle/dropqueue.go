package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/state"
)

// What an interrupt says became of the messages fm-send left queued
// behind the turn it cancelled.
const (
	QueueFlushed = "flushed" // the agent took them into a new turn after the cancel
	QueueDropped = "dropped" // --drop-queue: none of them is left to run
	QueueNone    = "none"    // --drop-queue: none was queued
)

// Where the text of dropped messages is.
const (
	DroppedToRecord = "record" // the agent's record holds them as a cancelled turn
	// DroppedToComposer: the agent put them back into its composer (claude
	// restores a cancelled prompt), where they count as fmctl's own text.
	DroppedToComposer = "composer"
)

// dropQueue is --drop-queue's step after the cancel was proved: a turn the
// agent took its queued messages into is cancelled with the same keys and
// proved over by the same record, so the agent is left idle; queued
// messages the record never took are reported untaken. Whatever cannot be
// proved (that turn still running, a queue still drawn, no record to tell
// by) is exit 3, queue-not-dropped.
func (c *Verbs) dropQueue(ctx context.Context, t *task.Target, q queued, res InterruptResult, hold *state.Lock) (InterruptResult, error) {
	if q.blind {
		return res, queueNotDropped(t, res, fmt.Sprintf("fm-send left messages queued, and no record of the %s agent can be read to tell whether it took them", t.Harness.Name))
	}
	if len(q.sends) == 0 {
		res.Queue = QueueNone
		return res, nil
	}
	for _, s := range q.sends {
		if !slices.Contains(res.Flushed, s.MessageID) {
			res.Untaken = append(res.Untaken, s.MessageID)
		}
	}
	if len(res.Untaken) > 0 && queueDrawn(ctx, t) {
		return res, queueNotDropped(t, res, "messages fm-send left queued are still drawn in its queue, so it may yet submit them")
	}
	if !res.FlushedRunning {
		// A flushed turn that already ended was answered, not dropped:
		// queue=flushed activity=idle says so.
		if res.Queue == "" {
			res.Queue = QueueDropped
		}
		return res, nil
	}
	before, _ := Activity(t)
	since := time.Now()
	cleared := ""
	if err := c.repeatInterrupt(t, InterruptGate(t), hold, &cleared)(ctx); err != nil {
		return res, err
	}
	verdict, err := c.confirmCancel(ctx, t, turnBefore{record: q.reader, running: true}, true, "", since, InterruptGate(t), hold)
	res.Rounds += verdict.Rounds
	if verdict.Cleared != "" {
		cleared = verdict.Cleared
	}
	if cleared != "" {
		res.Cleared = cleared
	}
	res.After = t.Backend.AgentState(ctx, t.Endpoint)
	if err != nil {
		return res, err
	}
	if t.Ability.Classifier && res.After.State != backends.StateAlive {
		return res, fault.Failed("task %s's agent is '%s' after the interrupt keys for the turn it took its queue into; an interrupt must leave the agent running", t.ID, res.After.State)
	}
	if verdict.Cancel != CancelConfirmed || verdict.Proof != ProofRecord {
		why := fmt.Sprintf("the turn it took the queued messages into still runs per its own record after %d round(s) of its interrupt keys", verdict.Rounds)
		if !verdict.Running {
			why = "nothing in its record proves the turn it took the queued messages into ended"
			res.FlushedRunning = false // nor that it runs
		}
		return res, queueNotDropped(t, res, why)
	}
	res.Queue, res.Dropped, res.Flushed, res.FlushedRunning = QueueDropped, res.Flushed, nil, false
	res.DroppedTo = droppedTo(ctx, t, q, res.Dropped, cleared)
	settleCancelled(t, before, time.Now())
	return res, nil
}

// droppedTo says where the dropped messages' text is. claude puts a
// cancelled prompt back into its composer, which the interrupt clears when
// it sees it in time (cleared); one drawn later stays there, and is
// recorded as fmctl's own text, put back after its interrupt, so the next
// fm-send clears it instead of refusing it as a person's draft (a record
// not written leaves it a draft, refused, never lost). Held text that is not
// the dropped turn's prompt is a person's, and stays.
func droppedTo(ctx context.Context, t *task.Target, q queued, dropped []string, cleared string) string {
	sig, ok := t.Harness.Screen()
	if cleared != "" || !ok || !sig.Restores {
		return DroppedToRecord
	}
	st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig)
	if err != nil || st.Composer != harness.ComposerHolding {
		return DroppedToRecord
	}
	held := deliver.ComposerDigest(st.HeldText())
	for _, s := range q.sends {
		if !slices.Contains(dropped, s.MessageID) {
			continue
		}
		if text, ok := q.watch(s).Newest(); ok && deliver.ComposerDigest(text) == held {
			now := time.Now().UnixNano()
			_ = t.Store.RecordTyped(t.ID, state.Typed{At: now, Digest: held, Submitted: true, Interrupted: now})
			return DroppedToComposer
		}
	}
	return DroppedToRecord
}

// queueDrawn reports whether the agent's screen still draws its queue of
// texts taken behind a turn (claude's queued rows, gemini's Queued head).
func queueDrawn(ctx context.Context, t *task.Target) bool {
	sig, ok := t.Harness.Screen()
	if !ok || !sig.HasQueue() {
		return false
	}
	s, err := t.Backend.Capture(ctx, t.Endpoint)
	return err == nil && sig.ShowsQueue(s.Lines)
}

// flushUnderWay reports whether the screen shows the agent busy again
// after the cancel with no queue drawn: it took its queue into a new turn
// its record does not show yet. A harness that draws no queue, or a screen
// that cannot be read, shows nothing.
func flushUnderWay(ctx context.Context, t *task.Target) bool {
	sig, ok := t.Harness.Screen()
	if !ok || !sig.HasQueue() {
		return false
	}
	s, err := t.Backend.Capture(ctx, t.Endpoint)
	return err == nil && sig.ReadScreen(s.Lines).Busy && !sig.ShowsQueue(s.Lines)
}

// queueNotDropped is --drop-queue's exit-3 refusal: the cancel was proved,
// but not that the agent is left idle with its queue gone.
func queueNotDropped(t *task.Target, res InterruptResult, why string) error {
	e := fault.Unconfirmed("task %s's turn was cancelled, but %s", t.ID, why).Coded(fault.EQueueNotDropped).
		Hint("what the agent does now: fm-control status %s", t.ID).
		Hint("to stop it, and its queue with it: fm-control exit %s", t.ID).
		With("id", t.ID).Put(fault.Int("rounds", res.Rounds))
	if len(res.Flushed) > 0 {
		e.With("queue", QueueFlushed).Put(fault.IDs("flushed", res.Flushed))
		if res.FlushedRunning {
			e.With("activity", "busy")
		}
	}
	if len(res.Untaken) > 0 {
		e.Put(fault.IDs("untaken", res.Untaken))
	}
	return withCleared(e, res.Cleared)
}
