package send

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"fmctl/backends"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/press"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/state"
)

// emptied is held composer text prepareComposer cleared before typing.
type emptied struct {
	text  string // as the screen drew it
	draft bool   // a person's, discarded with --discard-draft; else fmctl's own
}

// prepareComposer makes the composer of a harness with verified screen
// signatures fit to type into: it waits (bounded by FM_SEND_READY_WAIT) for
// the agent to be ready instead of typing into a half-drawn TUI, refuses at
// a blocking dialog (text typed there goes to the dialog: gemini stores it
// as its API key), and empties held text with the harness's verified clear,
// proving it empty, or refuses naming it. Held text is cleared only when it
// is fmctl's own (state.Typed) or discard is set; anything else is a
// person's draft, refused and left as it is. It reports what it cleared.
func prepareComposer(ctx context.Context, t *task.Target, sig harness.ScreenSig, v config.SendVars, req Request) (*emptied, error) {
	return prepareOnce(ctx, t, sig, v, req, false)
}

// prepareOnce is prepareComposer; letGo says the text fmctl last submitted
// (or the launch prompt) was already waited out once, so a composer still
// drawing it is refused.
func prepareOnce(ctx context.Context, t *task.Target, sig harness.ScreenSig, v config.SendVars, req Request, letGo bool) (*emptied, error) {
	poll, limit := v.Poll, v.ReadyWait
	waitFrom := time.Now()
	st, ready := deliver.WaitReady(ctx, t.Backend, t.Endpoint, sig, limit, poll)
	facts := []string{"id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target}
	if st.Dialog != "" {
		err := fault.Failed("task %s's %s agent is at its %s dialog; text typed now would go to the dialog, so nothing was sent", t.ID, t.Harness.Name, st.Dialog).Coded(fault.EDialog).
			With(append(facts, "ready", "blocked", "dialog", st.Dialog)...).
			Hint("answer the dialog in the pane, then send again")
		if d, ok := sig.Dialog(st.Dialog); ok && d.Answer != "" {
			err = err.Hint("at the %s dialog %s: fm-send %s --key <Key>", d.Name, d.Answer, t.ID)
			if d.Waits == harness.WaitPermission {
				err = err.Hint("or fm-control interrupt %s, which denies the tool call and ends the turn", t.ID)
			}
		}
		return nil, err
	}
	if !ready {
		return nil, fault.Failed("task %s's %s agent did not show a ready composer within %s (FM_SEND_READY_WAIT); nothing was sent", t.ID, t.Harness.Name, limit).Coded(fault.ENotReady).
			With(append(facts, "ready", "starting")...).
			Hint("look at the pane (the agent may still be starting), then send again")
	}
	if st.Dropping {
		// --when-ready waited for this before the locks (awaitTakesInput):
		// a back-off back since then is refused, not waited out again.
		return nil, refuseRetrying(t, facts)
	}
	typed, typedOK := t.Store.ReadTyped(t.ID)
	if !letGo && typedOK && typed.Undrawn && st.Composer == harness.ComposerEmpty {
		if next, ok := awaitLateDraw(ctx, t, sig, time.Until(time.Unix(0, typed.At).Add(lateDrawWait)), poll); ok {
			st = next
		}
	}
	if st.Composer != harness.ComposerHolding {
		return nil, nil
	}
	held := &emptied{text: st.HeldText()}
	var own state.Own
	if typedOK {
		own = typed.Owns(deliver.ComposerDigest(held.text))
	}
	if own == state.OwnLaunch {
		// Drawn again after it was let go of once: no second wait.
		if letGo || !awaitLetGo(ctx, t, sig, st, time.Until(waitFrom.Add(limit)), poll) {
			return nil, fault.Failed("task %s's %s agent still holds its launch prompt in its composer after %s (FM_SEND_READY_WAIT): it has not started its first turn; nothing was sent", t.ID, t.Harness.Name, limit).Coded(fault.ENotReady).
				With(append(facts, "ready", "starting")...).
				Hint("wait for it to take its brief: fm-control wait %s --for busy, then send again", t.ID)
		}
		return prepareOnce(ctx, t, sig, v, req, true)
	}
	if own == state.OwnSubmitted && !letGo {
		awaitLetGo(ctx, t, sig, st, time.Until(time.Unix(0, typed.At).Add(letGoWait)), poll)
		return prepareOnce(ctx, t, sig, v, req, true)
	}
	if own == "" || own == state.OwnSubmitted {
		if !req.DiscardDraft {
			return nil, refuseDraft(t, req, held.text, facts)
		}
		held.draft = true
	}
	if err := deliver.ClearHeld(ctx, t.Backend, t.Endpoint, sig, st, t.Ability.CanDeliver, 2*time.Second, poll); err != nil {
		return nil, fault.Failed("task %s: %v; the message would be glued onto it, so nothing was sent", t.ID, err).Coded(fault.EComposerHeld).
			With(append(facts, "held", held.text)...).
			Hint("look at the pane and clear that input (or submit it deliberately), then send again")
	}
	return held, nil
}

// letGoWait bounds, from its typing, how long the text fmctl last submitted
// may still be drawn in the composer before it counts as held again:
// gemini ran its BeforeAgent hooks for seconds under CI load before it
// redrew its composer.
const letGoWait = 5 * time.Second

// awaitLetGo waits, up to limit, for the composer to stop drawing the
// text it holds, and reports whether it did: the text fmctl last submitted,
// which the agent has taken but not yet redrawn (state.OwnSubmitted), or
// the launch prompt of an agent still starting (state.OwnLaunch). A
// composer still drawing the submitted text then is refused as a draft
// would be: nothing proves whose copy it is, and a clear key could land on
// the turn it started.
func awaitLetGo(ctx context.Context, t *task.Target, sig harness.ScreenSig, st harness.ScreenState, limit, poll time.Duration) bool {
	digest := deliver.ComposerDigest(st.HeldText())
	deadline := time.Now().Add(limit)
	for st.Composer == harness.ComposerHolding && deliver.ComposerDigest(st.HeldText()) == digest {
		if time.Now().After(deadline) || backends.Sleep(ctx, poll) != nil {
			return false
		}
		if next, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig); err == nil {
			st = next
		}
	}
	return true
}

// lateDrawWait bounds, from its typing, how long a text fmctl typed and
// never saw drawn (so pressed no Enter for) may still appear in the
// composer: a loaded kilo drew an 80-byte text more than 6 s after it was
// typed, and text typed before it appears is glued to it. The send that
// typed it waited out the record for 15 s, so this mostly costs nothing.
const lateDrawWait = 30 * time.Second

// awaitLateDraw waits, up to limit, for the composer to draw held text,
// and returns the screen that shows it.
func awaitLateDraw(ctx context.Context, t *task.Target, sig harness.ScreenSig, limit, poll time.Duration) (harness.ScreenState, bool) {
	wait := backends.Backoff{Max: max(poll, 100*time.Millisecond)}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if wait.Sleep(ctx) != nil {
			break
		}
		if st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig); err == nil && st.Composer == harness.ComposerHolding {
			return st, true
		}
	}
	return harness.ScreenState{}, false
}

// dropSettle is how long the screen must show no DropsInput mark before
// --when-ready types: between two retries pi makes its next attempt, which
// against an API still failing ends within milliseconds and draws the
// back-off again, so a mark absent for one read proves nothing.
const dropSettle = 500 * time.Millisecond

// awaitTakesInput is --when-ready: it waits, up to limit, until the screen
// has shown no DropsInput mark for dropSettle. It reads the screen only
// and holds no lock, so an interrupt or an exit is never kept waiting
// behind a send that waits out a back-off.
func awaitTakesInput(ctx context.Context, t *task.Target, sig harness.ScreenSig, v config.SendVars, limit time.Duration) error {
	if err := awaitFirstTurn(ctx, t, sig, v, limit); err != nil {
		return err
	}
	if len(sig.DropsInput) == 0 {
		return nil
	}
	deadline := time.Now().Add(limit)
	var clearSince time.Time
	for {
		st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig)
		switch {
		case err != nil || st.Dropping:
			clearSince = time.Time{}
		case clearSince.IsZero():
			clearSince = time.Now()
		case time.Since(clearSince) >= dropSettle:
			return nil
		}
		if time.Now().After(deadline) {
			return fault.Failed("task %s's %s agent was still in its retry back-off after %s (--timeout); nothing was sent", t.ID, t.Harness.Name, limit).Coded(fault.EAgentRetrying).
				With("id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target, "waited", limit.String()).
				Hint("its model API may be down: fm-control read %s shows its errors", t.ID)
		}
		if err := backends.Sleep(ctx, v.Poll); err != nil {
			return fault.Failed("the wait for task %s's agent to leave its retry back-off was interrupted; nothing was sent", t.ID).Coded(fault.EInterrupted)
		}
	}
}

// refuseRetrying refuses to type into an agent that would throw the text
// away: it says so before anything is typed, and names the ways on.
func refuseRetrying(t *task.Target, facts []string) error {
	return fault.Failed("task %s's %s agent is waiting out a retry of its model call, when it throws typed text away; nothing was sent", t.ID, t.Harness.Name).Coded(fault.EAgentRetrying).
		With(facts...).
		Hint("to send once it can take the text: fm-send %s --when-ready -- <text>", t.ID).
		Hint("to wait for its turn to end: fm-control wait %s --for idle", t.ID).
		Hint("to stop the retries: fm-control interrupt %s", t.ID)
}

// A refusal's error line quotes the draft's head, short enough for the
// line to stay one line; the draft fact under --json carries more of it,
// enough to tell whose it is.
const (
	draftLineRunes = 40
	draftFactRunes = 500
)

// refuseDraft refuses to type over text a person left in the composer:
// fmctl did not type it, and it is not a prompt the agent put back after
// an interrupt fmctl sent, so clearing it would lose it without a word.
func refuseDraft(t *task.Target, req Request, draft string, facts []string) error {
	return fault.Failed("task %s's composer holds a draft fmctl did not type (%q); nothing was sent", t.ID, deliver.Clip(draft, draftLineRunes)).Coded(fault.EDraftInComposer).
		With(append(facts, "draft", deliver.Clip(draft, draftFactRunes))...).
		Hint("send or clear the draft in the pane (fm-control read %s shows it), then send again", t.ID).
		Hint("%s", discardHint(t.ID, req))
}

// discardHint is the command that sends the message over the draft: the
// message itself when it is short enough to read in a hint, else the
// flag to add to the same command line.
func discardHint(id string, req Request) string {
	if !req.FromStdin && !strings.ContainsAny(req.Text, "\n\t") && utf8.RuneCountInString(req.Text) <= 60 {
		return fmt.Sprintf("or discard the draft and send: fm-send %s --discard-draft -- %s", id, harness.Quote(req.Text))
	}
	return "or discard the draft and send: run the same fm-send with --discard-draft"
}

// strandedSettle is how long an idle agent's queue must keep a text before
// fm-send releases it: at a turn's end cline takes its queue into the next
// turn itself, within a redraw, and a release key pressed in that moment
// would be one Enter too many.
const strandedSettle = time.Second

// releaseStranded submits, with the harness's QueueRelease key, a text its
// queue still holds though no turn runs (cline kept one there after the
// turn it was queued behind had ended), and proves the queue let go of it
// (FM_SEND_READY_WAIT bounds that). The message about to be typed would
// otherwise run before it, and it might never run. It returns the released
// text; an agent whose queue is empty, or not drawn, or that is busy, is
// left as it is.
func releaseStranded(ctx context.Context, t *task.Target, sig harness.ScreenSig, v config.SendVars, keys press.Keys) (string, error) {
	if sig.QueueRelease == "" || !t.Ability.CanDeliver(sig.QueueRelease) {
		return "", nil
	}
	stranded := func() (string, bool) {
		s, err := t.Backend.Capture(ctx, t.Endpoint)
		if err != nil {
			return "", false
		}
		return sig.StrandedQueue(s.Lines)
	}
	text, ok := stranded()
	for deadline := time.Now().Add(strandedSettle); ok && time.Now().Before(deadline); text, ok = stranded() {
		if backends.Sleep(ctx, v.Poll) != nil {
			return "", nil
		}
	}
	if !ok {
		return "", nil
	}
	if _, err := keys.Press(ctx, sig.QueueRelease, press.Opts{}); err != nil {
		return "", err
	}
	deadline := time.Now().Add(v.ReadyWait)
	for {
		s, err := t.Backend.Capture(ctx, t.Endpoint)
		if err == nil && !slices.Contains(sig.QueuedTexts(s.Lines), text) {
			return text, nil
		}
		if time.Now().After(deadline) || backends.Sleep(ctx, v.Poll) != nil {
			return "", fault.Failed("task %s's idle %s agent still queues %q after %s; nothing was sent behind it", t.ID, t.Harness.Name, deliver.Clip(text, draftLineRunes), sig.QueueRelease).Coded(fault.ENotReady).
				With("id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target, "stranded", text).
				Hint("%s is the key %s names to submit a queued text; its queue still listed it after %s (FM_SEND_READY_WAIT)", sig.QueueRelease, t.Harness.Name, v.ReadyWait).
				Hint("look at the pane: fm-control read %s", t.ID)
		}
	}
}

// firstTurnBusy reports whether the agent of a harness whose queue skips
// its first turn (QueueSkipsFirstTurn) is busy with that turn: its screen
// busy, and its record showing no turn of this agent ended yet. What
// cannot be read says no: the send then goes as it would anyway. obs is
// the task's live agent, whose record is read.
func firstTurnBusy(ctx context.Context, t *task.Target, sig harness.ScreenSig, obs backends.Observation) bool {
	if !sig.QueueSkipsFirstTurn {
		return false
	}
	st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig)
	if err != nil || !st.Busy {
		return false
	}
	r, ok := t.AgentRecord(obs)
	if !ok {
		return false
	}
	ended, known := t.TurnEndedSinceLaunch(r)
	return known && !ended
}

// awaitFirstTurn is --when-ready for an agent busy with its first turn,
// which its queue would skip: it waits, up to limit, for that turn to end.
func awaitFirstTurn(ctx context.Context, t *task.Target, sig harness.ScreenSig, v config.SendVars, limit time.Duration) error {
	if !sig.QueueSkipsFirstTurn {
		return nil
	}
	// One look at the agent serves the wait: the record of the agent whose
	// first turn it is does not move while that turn runs.
	obs := t.Backend.AgentState(ctx, t.Endpoint)
	deadline := time.Now().Add(limit)
	for firstTurnBusy(ctx, t, sig, obs) {
		if time.Now().After(deadline) {
			return refuseFirstTurn(t, []string{"id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target, "waited", limit.String()})
		}
		if err := backends.Sleep(ctx, v.Poll); err != nil {
			return fault.Failed("the wait for task %s's agent to end its first turn was interrupted; nothing was sent", t.ID).Coded(fault.EInterrupted)
		}
	}
	return nil
}

// refuseFirstTurn refuses to queue a text behind an agent's first turn,
// which its harness would never submit.
func refuseFirstTurn(t *task.Target, facts []string) *fault.Error {
	return fault.Failed("task %s's %s agent is in its first turn, and %s never submits a text queued behind that one; nothing was sent", t.ID, t.Harness.Name, t.Harness.Name).Coded(fault.ENotReady).
		With(append(facts, "ready", "first-turn")...).
		Hint("to send once that turn ends: fm-send %s --when-ready -- <text>", t.ID).
		Hint("to wait for it: fm-control wait %s --for idle", t.ID)
}
