package deliver

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"fmctl/backends"
	"fmctl/cmd/internal/press"
	"fmctl/harness"
)

// Verdict is the outcome of one submit.
type Verdict string

const (
	Submitted  Verdict = "submitted"   // the composer let go of the text after Enter
	Pending    Verdict = "pending"     // Enter was pressed, and the text still sits in the composer
	Unproven   Verdict = "unconfirmed" // typed and Enter sent, but the screen could not show either way
	Queued     Verdict = "queued"      // the agent took the text into its queue behind a running turn
	SendFailed Verdict = "send-failed" // the text did not reach the endpoint
)

// Options tune one submit.
type Options struct {
	Retries     int           // extra Enter presses while the text is provably still held
	ConfirmWait time.Duration // how long each Enter gets to show its effect
	// BusyRedraw is how much longer an Enter pressed during a turn gets to
	// show its effect before the submit is left unconfirmed: an agent busy
	// with a turn redraws late, and a second Enter could queue the text
	// twice.
	BusyRedraw time.Duration
	EchoWait   time.Duration // longest wait for the typed text to show before Enter
	SlashWait  time.Duration // longest wait for a slash command's completion popup to settle
	Poll       time.Duration // screen poll interval
	Popup      bool          // the text opens a completion popup (slash command)
	// Screen: the harness's verified screen signatures. With them the
	// composer is read by signature: Enter only once the text is drawn in
	// it (after the harness's paste settle), and submitted only once it
	// reads empty again.
	Screen *harness.ScreenSig
	// EnterGate, when set, is what a retried Enter passes (the task's
	// agent still running): the first Enter may have ended the agent (a
	// sent /exit), and the frame it left can still draw the text in a
	// composer, so the retries would go to the shell that took the pane
	// back.
	EnterGate func(backends.Observation) error
	// EndsAgent: the text ends the agent (an exit command), so the agent
	// gone proves it taken. Each look after Enter then reads the agent's
	// state with the screen (one call where the backend can), and the
	// submit returns as soon as the agent is gone, rather than waiting out
	// its window on the frame the agent left behind.
	EndsAgent bool
	// NothingTaken, when set, reads the agent's own log for proof that it
	// took nothing since the text was typed (RecordWatch.NothingTaken),
	// and every Enter after the first needs that proof, read right before
	// it. A harness that gets one Enter (ScreenSig.OneEnter) gets one more
	// with it, and only while its composer, no turn running, still holds
	// the text: cline dropped an Enter pressed as a turn ended, and logs
	// every prompt it takes at once, so its log proves the second Enter
	// cannot submit it twice. For a harness whose Enter may become a
	// newline (ScreenSig.EnterBecomesNewline: gemini), the screen showing
	// that newline is proof too (submitBySig adds it).
	NothingTaken func() bool
}

// DefaultOptions match the original toolkit's budgets; they are upper bounds,
// not sleeps.
func DefaultOptions() Options {
	return Options{Retries: 3, ConfirmWait: 400 * time.Millisecond, BusyRedraw: 2 * time.Second, EchoWait: 300 * time.Millisecond,
		SlashWait: 1200 * time.Millisecond, Poll: 10 * time.Millisecond}
}

// Result reports what a submit did.
type Result struct {
	Verdict Verdict
	Enters  int
	Err     error // why, for SendFailed
	// Replaced is the text a slash command's completion popup put in the
	// composer in place of the typed one when Enter chose a completion
	// (kilo completes an unknown "/nosuchcmd" to one of its own commands):
	// fmctl's keys put it there, so the next send may clear it.
	Replaced string
	// Undrawn: the composer never drew the typed text, so no Enter was
	// pressed.
	Undrawn bool
}

// Submit types text once and presses Enter until the composer lets go of it.
func Submit(ctx context.Context, b backends.Backend, ep backends.Endpoint, text string, o Options) Result {
	if o.Screen != nil {
		return submitBySig(ctx, b, ep, text, *o.Screen, o)
	}
	tail := tailOf(text)
	before, beforeKnown, err := captureThenType(ctx, b, ep, text)
	if err != nil {
		return Result{Verdict: SendFailed, Err: err}
	}
	// A changed composer line proves a short line arrived (it is typed in
	// one write), but of a long or multi-line text, a paste the agent
	// reads and draws piece by piece, it proves only that the head did:
	// such text counts as drawn, and then as let go of, only by its tail.
	changeProves := beforeKnown && !needsTail(text)
	typed, seen, left := waitEcho(ctx, b, ep, before, changeProves, tail, len(text), o)
	if !seen && needsTail(text) {
		// Never drawn whole: an Enter now could submit a part of it.
		return Result{Verdict: Unproven, Undrawn: true}
	}
	return pressEnter(ctx, b, ep, text, o, left, withTurn(ctx, b, ep, func(s backends.Screen) ComposerState {
		return Classify(before, typed, s, changeProves, tail)
	}))
}

// needsTail: text longer than this, or of several lines, goes as a paste
// (tmux's paste threshold), which the agent may draw in pieces.
func needsTail(text string) bool {
	return strings.Contains(text, "\n") || len(text) > 512
}

// sizeWait is how much longer than a short one a text of n bytes may take
// to be drawn, and again to be let go of: a paste reaches the agent at the
// pace it reads it, and the agent redraws as it goes (a 1 MB paste took the
// fake agent under 1 s on the shared 2-core machine; 2 s a megabyte leaves
// room for a real one).
func sizeWait(n int) time.Duration { return time.Duration(n) * 2 * time.Microsecond }

// maxPoll caps the backed-off screen polls: a fast agent is seen at the
// first 10 ms poll, and a long wait costs a capture every 100 ms.
const maxPoll = 100 * time.Millisecond

// pollUntil sleeps the next backed-off interval, never past deadline, and
// reports false when the deadline has passed or ctx is done.
func pollUntil(ctx context.Context, b *backends.Backoff, deadline time.Time) bool {
	left := time.Until(deadline)
	if left <= 0 {
		return false
	}
	return backends.Sleep(ctx, min(b.Next(), left)) == nil
}

// pressEnter presses Enter, and again only while classify proves the text
// still held, until the composer lets go of it.
// The first Enter's window grows with the text (a long one takes the agent
// longer to take in and redraw), plus what the echo wait left unused of its
// own allowance for the text's size.
func pressEnter(ctx context.Context, b backends.Backend, ep backends.Endpoint, text string, o Options, left time.Duration, classify func(backends.Screen) ComposerState) Result {
	res := Result{Verdict: Unproven}
	for attempt := 0; attempt <= o.Retries; attempt++ {
		enter := press.Keys{Backend: b, Endpoint: ep}
		if attempt > 0 {
			enter.Gate = o.EnterGate
			if o.NothingTaken != nil && !o.NothingTaken() {
				return res
			}
		}
		if p, err := enter.Press(ctx, harness.KeyEnter, press.Opts{}); err != nil && enter.Gate != nil {
			res.Verdict = Unproven
			return res
		} else if err != nil {
			// The typed text may be submitted: unconfirmed.
			if p.Unknown() {
				res.Enters++
				res.Verdict = Unproven
				return res
			}
			if attempt == 0 {
				return Result{Verdict: SendFailed, Err: fmt.Errorf("text typed but Enter failed: %w", err)}
			}
			return res
		}
		res.Enters++
		window := o.ConfirmWait
		if attempt == 0 {
			// What the echo wait left of its size allowance carries on.
			grow := sizeWait(len(text))
			window += min(max(left, 0), grow) + grow + time.Duration(min(utf8.RuneCountInString(text), 512)/20)*time.Millisecond
		}
		read := func() (ComposerState, bool) { return readAfterEnter(ctx, b, ep, o.EndsAgent, classify) }
		state := waitState(ctx, window, o.Poll, read)
		if state == HoldingBusy {
			// No second Enter behind a running turn: give the first one
			// longer to show, then leave it unconfirmed.
			state = waitState(ctx, o.BusyRedraw, o.Poll, read)
		}
		switch state {
		case Cleared:
			res.Verdict = Submitted
			return res
		case Holding:
			res.Verdict = Pending
		default:
			// Nothing proves the text is still held, so pressing Enter again
			// could submit something else; report it unconfirmed instead.
			res.Verdict = Unproven
			return res
		}
	}
	return res
}

// readAfterEnter is one look at what an Enter did: the composer's state,
// or Cleared once an agent the text ends is gone.
func readAfterEnter(ctx context.Context, b backends.Backend, ep backends.Endpoint, endsAgent bool, classify func(backends.Screen) ComposerState) (ComposerState, bool) {
	if !endsAgent {
		s, err := b.Capture(ctx, ep)
		return classify(s), err == nil
	}
	if sc, ok := b.(backends.StateCapturer); ok {
		obs, s, err := sc.AgentStateAndCapture(ctx, ep)
		switch {
		case obs.State == backends.StateDead:
			return Cleared, true
		case err == nil:
			return classify(s), true
		}
		// The screen was not read with the state (no pane id recorded):
		// it is read on its own.
		s, err = b.Capture(ctx, ep)
		return classify(s), err == nil
	}
	if b.AgentState(ctx, ep).State == backends.StateDead {
		return Cleared, true
	}
	s, err := b.Capture(ctx, ep)
	return classify(s), err == nil
}

// captureThenType takes the pre-typing baseline screen and types the text,
// in one call where the backend can.
func captureThenType(ctx context.Context, b backends.Backend, ep backends.Endpoint, text string) (backends.Screen, bool, error) {
	if ct, ok := b.(backends.CaptureTyper); ok {
		s, err := ct.CaptureThenType(ctx, ep, text)
		return s, err == nil, err
	}
	before, err := b.Capture(ctx, ep)
	beforeKnown := err == nil
	if err := b.SendText(ctx, ep, text); err != nil {
		return before, beforeKnown, err
	}
	return before, beforeKnown, nil
}

// waitEcho waits until the typed text shows (its tail, or with
// changeProves a changed composer line), and for a slash command until its
// completion popup stops changing, so Enter is not swallowed by a popup
// still drawing. The budget grows with the text's n bytes. It returns the
// last screen seen, whether the text showed, and the budget left.
func waitEcho(ctx context.Context, b backends.Backend, ep backends.Endpoint, before backends.Screen, changeProves bool, tail string, n int, o Options) (backends.Screen, bool, time.Duration) {
	limit := o.EchoWait + sizeWait(n)
	if o.Popup {
		limit = o.SlashWait
	}
	deadline := time.Now().Add(limit)
	poll := backends.Backoff{Max: max(o.Poll, maxPoll)}
	var last backends.Screen
	var prev string
	seen := false
	for {
		s, err := b.Capture(ctx, ep)
		if err == nil {
			last = s
			if Echoed(before, s, changeProves, tail) {
				if !o.Popup {
					return s, true, time.Until(deadline)
				}
				cur := strings.Join(s.Lines, "\n")
				if seen && cur == prev {
					return s, true, time.Until(deadline)
				}
				seen, prev = true, cur
			}
		}
		if !pollUntil(ctx, &poll, deadline) {
			return last, seen, 0
		}
	}
}

// waitState polls read until it says Cleared or the window ends, and
// returns the last state read.
func waitState(ctx context.Context, window, poll time.Duration, read func() (ComposerState, bool)) ComposerState {
	deadline := time.Now().Add(window)
	backoff := backends.Backoff{Max: max(poll, maxPoll)}
	state := Unknown
	for {
		if s, ok := read(); ok {
			state = s
			if state == Cleared {
				return state
			}
		}
		if !pollUntil(ctx, &backoff, deadline) {
			return state
		}
	}
}
