package deliver

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"fmctl/backends"
	"fmctl/harness"
)

// Verdict is the outcome of one submit.
type Verdict string

const (
	Submitted  Verdict = "submitted"   // the composer let go of the text after Enter
	Pending    Verdict = "pending"     // Enter was pressed, and the text still sits in the composer
	Unproven   Verdict = "unconfirmed" // typed and Enter sent, but the screen could not show either way
	SendFailed Verdict = "send-failed" // the text did not reach the endpoint
)

// Options tune one submit.
type Options struct {
	Retries     int           // extra Enter presses while the text is provably still held
	ConfirmWait time.Duration // how long each Enter gets to show its effect
	EchoWait    time.Duration // longest wait for the typed text to show before Enter
	SlashWait   time.Duration // longest wait for a slash command's completion popup to settle
	Poll        time.Duration // screen poll interval
	Popup       bool          // the text opens a completion popup (slash command)
	// Screen: the harness's verified screen signatures. With them the
	// composer is read by signature: Enter only once the text is drawn in
	// it (after the harness's paste settle), and submitted only once it
	// reads empty again.
	Screen *harness.ScreenSig
}

// DefaultOptions match the original toolkit's budgets; they are upper bounds,
// not sleeps.
func DefaultOptions() Options {
	return Options{Retries: 3, ConfirmWait: 400 * time.Millisecond, EchoWait: 300 * time.Millisecond,
		SlashWait: 1200 * time.Millisecond, Poll: 10 * time.Millisecond}
}

// Result reports what a submit did.
type Result struct {
	Verdict Verdict
	Enters  int
	Err     error // why, for SendFailed
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
	typed := waitEcho(ctx, b, ep, before, beforeKnown, tail, o.Popup, o)
	return pressEnter(ctx, b, ep, text, o, withTurn(ctx, b, ep, func(s backends.Screen) ComposerState {
		return Classify(before, typed, s, beforeKnown, tail)
	}))
}

// pressEnter presses Enter, and again only while classify proves the text
// still held, until the composer lets go of it.
func pressEnter(ctx context.Context, b backends.Backend, ep backends.Endpoint, text string, o Options, classify func(backends.Screen) ComposerState) Result {
	res := Result{Verdict: Unproven}
	for attempt := 0; attempt <= o.Retries; attempt++ {
		if err := b.SendKey(ctx, ep, harness.KeyEnter); err != nil {
			if attempt == 0 {
				return Result{Verdict: SendFailed, Err: fmt.Errorf("text typed but Enter failed: %w", err)}
			}
			return res
		}
		res.Enters++
		window := o.ConfirmWait
		if attempt == 0 {
			// Long text takes the agent longer to re-render.
			window += time.Duration(utf8.RuneCountInString(text)/20) * time.Millisecond
		}
		state := waitState(ctx, window, o.Poll, func() (ComposerState, bool) {
			s, err := b.Capture(ctx, ep)
			return classify(s), err == nil
		})
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

// waitEcho waits until the typed text shows, and for a slash command until
// its completion popup stops changing, so Enter is not swallowed by a popup
// still drawing. It returns the last screen seen.
func waitEcho(ctx context.Context, b backends.Backend, ep backends.Endpoint, before backends.Screen, beforeKnown bool, tail string, slash bool, o Options) backends.Screen {
	limit := o.EchoWait
	if slash {
		limit = o.SlashWait
	}
	deadline := time.Now().Add(limit)
	var last backends.Screen
	var prev string
	seen := false
	for {
		s, err := b.Capture(ctx, ep)
		if err == nil {
			last = s
			if Echoed(before, s, beforeKnown, tail) {
				if !slash {
					return s
				}
				cur := strings.Join(s.Lines, "\n")
				if seen && cur == prev {
					return s
				}
				seen, prev = true, cur
			}
		}
		if time.Now().After(deadline) || backends.Sleep(ctx, o.Poll) != nil {
			return last
		}
	}
}

// waitState polls read until it says Cleared or the window ends, and
// returns the last state read.
func waitState(ctx context.Context, window, poll time.Duration, read func() (ComposerState, bool)) ComposerState {
	deadline := time.Now().Add(window)
	state := Unknown
	for {
		if s, ok := read(); ok {
			state = s
			if state == Cleared {
				return state
			}
		}
		if time.Now().After(deadline) || backends.Sleep(ctx, poll) != nil {
			return state
		}
	}
}
