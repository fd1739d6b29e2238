package lifecycle

import (
	"context"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/press"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/harness/records"
	"fmctl/state"
)

// InterruptResult is what an interrupt delivery proved.
type InterruptResult struct {
	Verified string // agent-alive or endpoint
	Cancel   string // CancelConfirmed or CancelNoTurn (CancelUnconfirmed comes with an exit-3 error)
	Proof    string // what the cancel verdict rests on (ProofRecord, ...)
	Rounds   int    // rounds of interrupt keys sent
	After    backends.Observation
	// Cleared is the cancelled prompt the agent put back into its
	// composer, which the interrupt cleared ("" for none).
	Cleared string
	// Flushed are the ids of messages fm-send left queued that the agent
	// submitted once the cancelled turn ended (its record holds them now),
	// and FlushedRunning says the record shows that new turn running.
	Flushed        []string
	FlushedRunning bool
	// Queue is what became of those messages (QueueFlushed, QueueDropped,
	// QueueNone; "" when none was taken and dropping was not asked).
	Queue string
	// Dropped are the flushed messages whose turn a second cancel ended
	// (--drop-queue), DroppedTo where their text is now (DroppedToRecord,
	// DroppedToComposer), and Untaken the queued messages the record never
	// held after the cancel: the agent dropped them from its queue (or put
	// them back, and the interrupt cleared them: Cleared). Without
	// --drop-queue, Untaken are those an idle agent no longer draws in its
	// queue (queued.letGo).
	Dropped   []string
	DroppedTo string
	Untaken   []string
}

// keysDone is what one round of interrupt keys did.
type keysDone struct {
	ack     string                // what the cancel acknowledgement said
	after   *backends.Observation // the agent read after the keys, when asked
	cleared string                // the cancelled prompt the agent put back, cleared
}

// CheckKeys refuses, before anything is sent, a backend that cannot deliver
// the harness's interrupt key or the composer clear that key needs.
func CheckKeys(t *task.Target) error {
	h := t.Harness
	if !t.Ability.CanDeliver(h.InterruptKey) {
		return fault.Failed("harness %s interrupts with %s, which the %s backend cannot deliver; refusing to send a different key", h.Name, h.InterruptKey, t.BackendName).Coded(fault.EKeyUnsupported)
	}
	if h.ClearKey != "" && !t.Ability.CanDeliver(h.ClearKey) {
		return fault.Failed("harness %s needs %s to clear its composer after an interrupt, which the %s backend cannot deliver; nothing was sent", h.Name, h.ClearKey, t.BackendName).Coded(fault.EKeyUnsupported)
	}
	return nil
}

// RefuseState explains why a pre-action state stops a verb.
func RefuseState(t *task.Target, verb string, obs backends.Observation) error {
	id := t.ID
	switch obs.State {
	case backends.StateDead, backends.StateMissing:
		code := fault.EAgentNotRunning
		if obs.State == backends.StateMissing {
			code = fault.EEndpointMissing
		}
		if verb == "interrupt" {
			return fault.Failed("no agent is running at task %s's recorded endpoint %s (state: %s); there is nothing to interrupt", id, t.Endpoint.Target, obs.State).Coded(code)
		}
		return fault.Failed("task %s's recorded endpoint %s is gone, so there is no agent to stop", id, t.Endpoint.Target).Coded(code).
			Hint("relaunch it with fm-spawn %s --relaunch, or end it with fm-teardown %s", id, id)
	case backends.StateDrifted:
		return fault.Failed("task %s's recorded endpoint %s has drifted (%s), so nothing was sent", id, t.Endpoint.Target, obs.Detail).Coded(fault.EEndpointDrifted).Hint("%s", t.DriftFix())
	case backends.StateSuspended:
		return fault.Failed("task %s's agent is stopped, not gone, so %s it would act on a frozen worker", id, gerund(verb)).Coded(fault.EAgentSuspended).
			Hint("resume it in its own endpoint (fg) first")
	}
	return fault.Failed("task %s's endpoint %s reads '%s' rather than a positively classified state, so no lifecycle key was sent", id, t.Endpoint.Target, obs.State).Coded(fault.EAgentUnverified).
		With("detail", obs.Detail).
		Hint("%s", obs.Detail).
		Hint("look at the pane (fm-control read %s) before acting on it", id)
}

func gerund(verb string) string {
	switch verb {
	case "interrupt":
		return "interrupting"
	case "exit":
		return "stopping"
	}
	return verb + "ing"
}

// deliverInterrupt sends the harness's interrupt key (repeat times, each its
// own input event) and its composer clear, and reads any cancel
// acknowledgement. It does not judge the agent's state afterwards.
func (c *Verbs) deliverInterrupt(ctx context.Context, t *task.Target, rec func() turnRecord) (string, error) {
	done, err := c.deliverInterruptThenRead(ctx, t, false, nil, nil, rec)
	return done.ack, err
}

// deliverInterruptThenRead is deliverInterrupt that, when read is set, also
// returns the agent state read after the keys. Where nothing waits between
// the last key and that read (no cancel acknowledgement to watch), a backend
// that can sends the last key and reads the state in one call. With gate
// set, every key goes only to an agent gate accepts, read right before it
// (one call where the backend gates server-side; elsewhere the caller judged
// the round once, press.GateOnce, and gate is nil): the first key's refusal
// is returned unchanged, with nothing sent; a later key's ends the presses
// and returns the state gate judged, for the caller's check of the agent
// after its interrupt. Every key passes the gate, not only the first: a key
// may end the agent (muse exits on Escape), and the shell that takes the
// pane back must not read the next one. With hold set (the input lock of a
// verb that types nothing after the keys), a gap the last key needs is
// recorded in it for the next input instead of slept through. rec, when
// set, gives the agent's record, opened before the keys (inside the gate,
// where the backend gates the first key): a cancel it marks ends the wait
// for a restored prompt (restoreStep).
func (c *Verbs) deliverInterruptThenRead(ctx context.Context, t *task.Target, read bool, gate func(backends.Observation) error, hold *state.Lock, rec func() turnRecord) (keysDone, error) {
	h := t.Harness
	// The composer a restored prompt is judged against is read with the
	// first key (in its gated call where there is one).
	sig, watch := restoreSig(t)
	ack := c.startAck(t)
	keys := make([]harness.Key, 0, h.Repeat+1)
	for range h.Repeat {
		keys = append(keys, h.InterruptKey)
	}
	if h.ClearKey != "" {
		keys = append(keys, h.ClearKey)
	}
	var before *backends.Screen
	if sig.CancelsDialogs() {
		// A dialog the interrupt keys do not reject gets its own keys:
		// the screen is read first, for such a harness only, and that
		// read is the composer a restored prompt is judged against.
		if s, err := t.Backend.Capture(ctx, t.Endpoint); err == nil {
			before = &s
			if cancel := sig.DialogCancel(sig.ReadScreen(s.Lines).Dialog); len(cancel) > 0 {
				keys = cancel
			}
		}
	}
	k := press.Keys{Backend: t.Backend, Endpoint: t.Endpoint, Gate: gate, Gap: h.PressGap, Hold: hold, Words: press.InterruptWords(t.ID, t.BackendName)}
	since := time.Now()
	p, err := k.Sequence(ctx, keys, press.Opts{ScreenBefore: watch && before == nil, ReadAfter: read && !ack.pending()})
	if watch && p.Before == nil && p.Sent > 0 {
		p.Before = before
	}
	if p.Sent > 0 {
		// The agent may put the cancelled prompt back into its composer,
		// where the next fm-send may then clear it as fmctl's own text; a
		// mark not written leaves it a draft, refused, never lost.
		_ = t.Store.MarkInterrupted(t.ID, time.Now())
	}
	restore := noRestore
	if p.Before != nil {
		if !sig.RestoresQueueOnly || sig.ShowsQueue(p.Before.Lines) {
			var marked func() bool
			if sig.RestoreOrMark {
				marked = recordedCancel(rec, since)
			}
			if step := c.restoreStep(ctx, t, sig, sig.ReadScreen(p.Before.Lines), marked); step != nil {
				restore = step
			}
		}
	}
	switch {
	case p.Refused != nil && p.Sent == 0:
		return keysDone{}, p.Refused
	case p.Refused != nil:
		return keysDone{ack: CancelUnconfirmed, after: p.Judged}, nil
	case err != nil && p.Sent == h.Repeat && !p.Unknown():
		return keysDone{}, fault.Failed("interrupt key %s reached task %s, but %s did not (%v)", h.InterruptKey, t.ID, h.ClearKey, backends.StderrOf(p.Err)).Coded(fault.EDeliveryFailed).
			Hint("its composer may still hold the cancelled prompt: clear it before sending anything else")
	case err != nil:
		return keysDone{}, err
	}
	// The next input waits out an Escape's gap, which the input lock
	// keeps. A restored prompt's clear does not (restoreStep says why).
	k.Settle(keys[len(keys)-1])
	done := keysDone{after: p.After}
	if done.cleared, err = restore(); err != nil {
		return keysDone{}, err
	}
	done.ack = ack.wait(ctx, c.waits)
	if read && done.after == nil {
		obs := t.Backend.AgentState(ctx, t.Endpoint)
		done.after = &obs
	}
	return done, nil
}

// restoreSig is the screen signature of a harness that puts a cancelled
// prompt back into its composer (claude, pi; the table's Restores), when
// its composer must be watched: unless its own telemetry proves it idle,
// with no turn to put back, which spares the screen read.
func restoreSig(t *task.Target) (harness.ScreenSig, bool) {
	sig, ok := t.Harness.Screen()
	if !ok || !sig.Restores {
		return sig, false
	}
	if a, known := Activity(t); known && (a.State == state.ActivityIdle || a.State == state.ActivityReady) {
		return sig, false
	}
	return sig, true
}

func noRestore() (string, error) { return "", nil }

// restoreStep is the step run after the keys, given the composer read
// before them (nil when there is none to run): when the agent was busy
// with an empty composer, it waits briefly for the restored text and
// clears it with the harness's verified clear, so the next message is not
// glued onto it, and returns what it cleared. The clear does not wait out
// the Escape's gap: the prompt put back is the agent's own answer to the
// Escape, drawn once it had read it as a key of its own, so no key typed
// after can merge with it (the gap is for input that may reach the agent
// before it read the Escape). A draft the composer already held is left
// alone. marked, when set, reports a cancel the agent's record marks, for
// a harness that either puts the prompt back or marks the cancel, never
// both (the table's RestoreOrMark: claude), so a marked cancel ends the
// wait. The record is read every FM_CONTROL_POLL (a parse of it), and the
// screen (one tmux call) from 10 ms doubling to it: the interrupt answers
// at most that long after either.
func (c *Verbs) restoreStep(ctx context.Context, t *task.Target, sig harness.ScreenSig, before harness.ScreenState, marked func() bool) func() (string, error) {
	if !before.Busy || before.Composer != harness.ComposerEmpty {
		return nil
	}
	return func() (string, error) {
		deadline := time.Now().Add(restoreWait)
		var looked time.Time
		poll := c.waits.Backoff()
		for {
			st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig)
			if err == nil && st.Composer == harness.ComposerHolding {
				if err := deliver.ClearHeld(ctx, t.Backend, t.Endpoint, sig, st, t.Ability.CanDeliver, 2*time.Second, 20*time.Millisecond); err != nil {
					return "", fault.Failed("interrupt key %s reached task %s, which put the cancelled prompt back: %v; clear it before sending anything else", t.Harness.InterruptKey, t.ID, err).Coded(fault.EComposerHeld)
				}
				return st.HeldText(), nil
			}
			if marked != nil && time.Since(looked) >= c.waits.Poll {
				if looked = time.Now(); marked() {
					return "", nil
				}
			}
			if time.Now().After(deadline) || poll.Sleep(ctx) != nil {
				return "", nil
			}
		}
	}
}

// recordedCancel is the check restoreStep makes of a record that marks a
// cancel by itself (records.CancelMarker), or nil for one that cannot.
func recordedCancel(rec func() turnRecord, since time.Time) func() bool {
	if rec == nil {
		return nil
	}
	r := rec()
	if _, ok := r.(records.CancelMarker); !ok {
		return nil
	}
	return func() bool { return markedCancel(r, since) }
}

// cancelForExit cancels the running turn of a harness that refuses its exit
// command while busy, and waits (bounded) until its screen reads idle.
func (c *Verbs) cancelForExit(ctx context.Context, t *task.Target, sig harness.ScreenSig) (harness.ScreenState, error) {
	if _, err := c.deliverInterrupt(ctx, t, nil); err != nil {
		return harness.ScreenState{}, err
	}
	deadline := time.Now().Add(c.waits.Settle)
	poll := c.waits.Backoff()
	for {
		st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig)
		if err == nil && !st.Busy && !turnRuns(ctx, t) {
			return st, nil
		}
		if time.Now().After(deadline) || poll.Sleep(ctx) != nil {
			return st, fault.Failed("task %s's %s agent was still busy %s after its interrupt key, and it refuses its exit command %s during a turn; nothing was typed", t.ID, t.Harness.Name, Seconds(c.waits.Settle), t.Harness.ExitCommand).Coded(fault.EBusy).
				With("id", t.ID, "exit_result", "refused").Put(fault.Yes("busy"))
		}
	}
}

// restoreWait bounds the wait for a restored prompt to be drawn; one drawn
// later is still cleared by fm-send before it types.
const restoreWait = 1500 * time.Millisecond

// Interrupt is the full verb: deliver (the first key only past gate, when
// set), prove the turn ended, repeating the keys while the agent's own
// record shows it running, then prove the agent is still there. A turn the
// record still shows running after every round is exit 3, and so is one
// nothing proved over (nor proved never there).
//
// With dropQueue set, a turn the agent took its queued messages into once
// the cancelled one ended is cancelled too (dropQueue), so the agent is
// left idle, or the verb exits 3.
func (c *Verbs) Interrupt(ctx context.Context, t *task.Target, gate func(backends.Observation) error, hold *state.Lock, dropQueue bool) (InterruptResult, error) {
	before, _ := Activity(t)
	reported := before.State == state.ActivityBusy || before.State == state.ActivityWaiting
	repeatGate := gate
	if repeatGate == nil {
		repeatGate = InterruptGate(t)
	}
	// The record is read right before the first key: inside the gate,
	// from the state it judged, where the backend gates a key itself (one
	// multiplexer call still), else after a read of its own.
	var turn turnBefore
	var queue queued
	if _, gated := t.Backend.(backends.GatedKeySender); gated && gate != nil {
		first := true
		gate = func(obs backends.Observation) error {
			if err := repeatGate(obs); err != nil || !first {
				return err
			}
			first = false
			turn = c.readTurn(ctx, t, &obs)
			queue = pendingQueue(t, turn.record)
			return nil
		}
	} else {
		turn = c.readTurn(ctx, t, nil)
		queue = pendingQueue(t, turn.record)
	}
	drawnBefore := !dropQueue && queueDrawnBefore(ctx, t)
	since := time.Now()
	done, err := c.deliverInterruptThenRead(ctx, t, true, gate, hold, func() turnRecord { return turn.record })
	if err != nil {
		return InterruptResult{}, err
	}
	after := done.after
	res := InterruptResult{Verified: "endpoint", Cancel: done.ack, Proof: ProofNone, Rounds: 1, After: *after, Cleared: done.cleared}
	var verdict cancelled
	if after.State == backends.StateAlive || after.State == backends.StateUnverified {
		verdict, err = c.confirmCancel(ctx, t, turn, reported, done.ack, since, repeatGate, hold)
		res.Cancel, res.Proof, res.Rounds = verdict.Cancel, verdict.Proof, verdict.Rounds
		if verdict.Cleared != "" {
			res.Cleared = verdict.Cleared
		}
		if res.Rounds > 1 || err != nil {
			// The repeats are keys too: the agent is judged after the last.
			res.After = t.Backend.AgentState(ctx, t.Endpoint)
			if err != nil && (res.After.State == backends.StateAlive || res.After.State == backends.StateUnverified) {
				return res, err
			}
		}
	}
	if res.After.State == backends.StateMissing {
		return res, fault.Failed("task %s's endpoint disappeared while interrupting it", t.ID).Coded(fault.EEndpointMissing).
			Hint("relaunch it with fm-spawn %s --relaunch, or end it with fm-teardown %s", t.ID, t.ID)
	}
	if t.Ability.Classifier {
		if res.After.State != backends.StateAlive {
			return res, fault.Failed("task %s's agent is '%s' after its interrupt key; an interrupt must leave the agent running", t.ID, res.After.State)
		}
		res.Verified = "agent-alive"
	}
	if verdict.Running {
		return res, withCleared(stillRunning(t, verdict, c.waits.Cancel), res.Cleared)
	}
	if verdict.Retry != "" {
		return res, withCleared(retryUnrecorded(t, verdict), res.Cleared)
	}
	if res.Cancel == CancelUnconfirmed {
		return res, withCleared(cancelUnproven(t, res), res.Cleared)
	}
	if ids, running := queue.flushed(ctx, flushWait, c.waits.Backoff(), func() bool { return flushUnderWay(ctx, t) }); len(ids) > 0 {
		res.Queue, res.Flushed, res.FlushedRunning = QueueFlushed, ids, running
	}
	if !dropQueue && !res.FlushedRunning {
		res.Untaken = queue.letGo(ctx, t, res.Flushed, drawnBefore)
		if len(res.Untaken) > 0 {
			// So wait --for submitted answers for them at once; a ledger
			// that cannot be written leaves them queued there, and such a
			// wait then times out as it would have.
			_ = t.Store.MarkSends(t.ID, res.Untaken, state.VerdictUntaken)
		}
	}
	if dropQueue {
		if res, err = c.dropQueue(ctx, t, queue, res, hold); err != nil {
			return res, err
		}
	}
	if res.FlushedRunning {
		// The new turn is the agent's: its report of it stands.
		return res, nil
	}
	if verdict.Cancel == CancelConfirmed && verdict.Proof == ProofRecord {
		settleCancelled(t, before, time.Now())
	}
	return res, nil
}

// withCleared names, on an interrupt's exit-3 refusal, the cancelled prompt
// it cleared: the text form prints no facts, so a hint line says it too.
func withCleared(e *fault.Error, cleared string) error {
	if cleared == "" {
		return e
	}
	return e.With("cleared", cleared).Hint("the agent put the cancelled prompt %q back, and it was cleared", deliver.Clip(cleared, 40))
}

// settleCancelled moves the agent's reported activity on to idle once its
// own record shows the interrupted turn ended: claude fires no hook on a
// user interrupt, so its last report (busy, or waiting at a dialog) would
// otherwise stand until the next prompt and `wait --for idle` would time
// out on an idle agent. Only a report unchanged since before the keys is
// replaced: a newer one (a prompt submitted meanwhile) is the agent's own
// word and stands. A write that fails leaves the report as it was.
func settleCancelled(t *task.Target, before state.AgentState, now time.Time) {
	if before.State != state.ActivityBusy && before.State != state.ActivityWaiting {
		return
	}
	cur, ok := Activity(t)
	if !ok || !cur.At.Equal(before.At) || cur.State != before.State {
		return
	}
	idle := cur.Next(state.ActivityIdle, cur.Gen, state.EventTurnCancelled, cur.Harness, now)
	_ = state.WriteAtomic(t.Store.AgentStatePath(t.ID), idle.Bytes())
}

// prepareExitComposer, for a harness with verified screen signatures,
// refuses to type the exit command into a blocking dialog (gemini would
// store "/quit" as its API key), waits for a composer not drawn yet,
// clears held text first so the command is not glued onto it, and has the
// submit read the composer by signature. gone says the agent ended on its
// own while it waited: nothing is left to type into.
func (c *Verbs) prepareExitComposer(ctx context.Context, t *task.Target, o *deliver.Options) (gone bool, err error) {
	sig, ok := t.Harness.Screen()
	if !ok {
		return false, nil
	}
	st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig)
	if err != nil {
		return false, nil // the submit's own checks follow
	}
	if sig.IdleExit && st.Dialog == "" && (st.Busy || turnRuns(ctx, t)) {
		if st, err = c.cancelForExit(ctx, t, sig); err != nil {
			return false, err
		}
	}
	if st.Dialog == "" && !st.Ready() {
		var ready bool
		if st, ready, gone = c.awaitExitComposer(ctx, t, sig, st); gone {
			return true, nil
		}
		if !ready && st.Dialog == "" {
			return false, fault.Failed("task %s's %s agent did not show a ready composer within %s (FM_CONTROL_READY_WAIT); nothing was typed", t.ID, t.Harness.Name, Seconds(c.waits.Ready)).Coded(fault.ENotReady).
				Hint("an exit command typed before the composer is drawn can be dropped, or left there as a draft").
				Hint("look at the pane (fm-control read %s): once its composer is drawn, exit again", t.ID).
				Hint("an agent that never draws one is ended by hand in its pane, or with its endpoint by fm-teardown %s --force, which also discards work that has not landed", t.ID).
				With("id", t.ID, "exit_result", "refused", "ready", "starting")
		}
	}
	if st.Dialog != "" {
		return false, fault.Failed("task %s's %s agent is at its %s dialog; its exit command typed there would go to the dialog, so nothing was typed", t.ID, t.Harness.Name, st.Dialog).Coded(fault.EDialog).
			Hint("answer the dialog in the pane first").
			With("id", t.ID, "exit_result", "refused", "dialog", st.Dialog)
	}
	if err := deliver.ClearHeld(ctx, t.Backend, t.Endpoint, sig, st, t.Ability.CanDeliver, 2*time.Second, 20*time.Millisecond); err != nil {
		return false, fault.Failed("task %s: %v; its exit command would be glued onto it, so nothing was typed", t.ID, err).Coded(fault.EComposerHeld)
	}
	o.Screen = &sig
	return false, nil
}

// awaitExitComposer waits, within FM_CONTROL_READY_WAIT, for a composer
// not drawn (a TUI still starting drops what is typed before it draws one,
// or keeps it as a draft), or a dialog, or the agent gone: one still
// ending when exit began (cline quits on an idle Ctrl+C, and its closing
// screen has no composer) has nothing left to type into.
func (c *Verbs) awaitExitComposer(ctx context.Context, t *task.Target, sig harness.ScreenSig, st harness.ScreenState) (last harness.ScreenState, ready, gone bool) {
	deadline := time.Now().Add(c.waits.Ready)
	poll := c.waits.Backoff()
	for {
		if t.Backend.AgentState(ctx, t.Endpoint).State == backends.StateDead {
			return st, false, true
		}
		if time.Now().After(deadline) || poll.Sleep(ctx) != nil {
			return st, false, false
		}
		if next, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig); err == nil {
			if st = next; st.Dialog != "" || st.Ready() {
				return st, st.Ready(), false
			}
		}
	}
}
