package deliver

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/press"
	"fmctl/harness"
)

// holdsTail reports whether a composer read by signature holds the typed
// text: its tail drawn (rows joined, since long text wraps), or the
// harness's placeholder for a collapsed paste (claude "[Pasted text #1 +29
// lines]", pi "[paste #1 4096 chars]"), whose text is never drawn. Where
// the placeholder counts the paste's lines (claude), it proves the text
// only once the counts add up to all of it (newlines of the text sent): a
// paste drawn as it arrives, or split in pieces, would otherwise read as
// held while its tail is still on the way.
func holdsTail(sig harness.ScreenSig, st harness.ScreenState, tail string, newlines int) bool {
	if st.Composer != harness.ComposerHolding {
		return false
	}
	joined := strings.Join(st.Held, "")
	if tail != "" && (strings.Contains(joined, tail) || strings.Contains(strings.ReplaceAll(joined, "⏎", ""), tail)) {
		return true
	}
	for _, c := range sig.Collapsed {
		if strings.Contains(joined, c) {
			return !sig.CollapsedLines || collapsedLines(joined) == newlines
		}
	}
	return false
}

// collapsedCount is compiled at first use: only a send that meets a
// collapsed paste reads it, and a regexp compiled at start-up would cost
// every invocation.
var collapsedCount = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\+([0-9]+) lines?\]`) })

// collapsedLines adds up the "+N lines" of every placeholder drawn.
func collapsedLines(s string) int {
	n := 0
	for _, m := range collapsedCount().FindAllStringSubmatch(s, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}

// sigClassify reads the composer after Enter by the harness's signatures:
// empty again is Cleared (the caller saw the text drawn first), still
// holding the text is Holding (HoldingBusy while a turn runs), anything else
// (a dialog, other text) Unknown.
func sigClassify(sig harness.ScreenSig, s backends.Screen, tail string, newlines int) ComposerState {
	st := sig.ReadScreen(s.Lines)
	switch {
	case st.Dialog == "" && st.Composer == harness.ComposerEmpty:
		return Cleared
	case holdsTail(sig, st, tail, newlines) && st.Busy:
		return HoldingBusy
	case holdsTail(sig, st, tail, newlines):
		return Holding
	}
	return Unknown
}

// ReadComposer captures the screen and reads it by the signatures.
func ReadComposer(ctx context.Context, b backends.Backend, ep backends.Endpoint, sig harness.ScreenSig) (harness.ScreenState, error) {
	s, err := b.Capture(ctx, ep)
	if err != nil {
		return harness.ScreenState{}, err
	}
	return sig.ReadScreen(s.Lines), nil
}

// WaitingDialog reads the screen by the signatures: the dialog drawn on
// it that the agent waits at (a permission, a question, a trust or API-key
// dialog), if any; an overlay the user opened (help) waits for nothing.
func WaitingDialog(ctx context.Context, b backends.Backend, ep backends.Endpoint, sig harness.ScreenSig) (harness.Dialog, bool) {
	st, err := ReadComposer(ctx, b, ep, sig)
	if err != nil {
		return harness.Dialog{}, false
	}
	return sig.WaitingAt(st)
}

// WaitReady polls until the screen shows the harness ready (composer drawn,
// no dialog, no not-ready mark) or a blocking dialog, bounded by limit. It
// returns the last reading and whether it was ready.
func WaitReady(ctx context.Context, b backends.Backend, ep backends.Endpoint, sig harness.ScreenSig, limit, poll time.Duration) (harness.ScreenState, bool) {
	deadline := time.Now().Add(limit)
	var last harness.ScreenState
	for {
		if st, err := ReadComposer(ctx, b, ep, sig); err == nil {
			last = st
			if st.Dialog != "" {
				return st, false
			}
			if st.Ready() {
				return st, true
			}
		}
		if time.Now().After(deadline) || backends.Sleep(ctx, poll) != nil {
			return last, false
		}
	}
}

// ClearHeld empties a composer the screen proves holds text, with the
// harness's verified clear sequence, and proves it empty within limit.
// Nothing is pressed unless the composer holds text (several clear keys are
// dangerous on an empty one), and nothing at all when the backend cannot
// deliver every key of the sequence. The error names what it holds.
func ClearHeld(ctx context.Context, b backends.Backend, ep backends.Endpoint, sig harness.ScreenSig, st harness.ScreenState, can func(harness.Key) bool, limit, poll time.Duration) error {
	if st.Composer != harness.ComposerHolding {
		return nil
	}
	keys := sig.Clear.Presses(st.Held)
	if len(keys) == 0 {
		return fmt.Errorf("its composer holds %q and the harness has no verified clear", Clip(st.HeldText(), heldRunes))
	}
	for _, k := range keys {
		if !can(k) {
			return fmt.Errorf("its composer holds %q, and clearing it needs %s, which this backend cannot deliver", Clip(st.HeldText(), heldRunes), k)
		}
	}
	if p, _ := (press.Keys{Backend: b, Endpoint: ep, Gap: sig.Clear.Gap}).Sequence(ctx, keys, press.Opts{}); p.Err != nil {
		return fmt.Errorf("its composer holds %q and the clear key %s failed: %w", Clip(st.HeldText(), heldRunes), keys[p.Sent], p.Err)
	}
	deadline := time.Now().Add(limit)
	for {
		now, err := ReadComposer(ctx, b, ep, sig)
		if err == nil && now.Dialog == "" && now.Composer == harness.ComposerEmpty {
			return nil
		}
		if time.Now().After(deadline) || backends.Sleep(ctx, poll) != nil {
			held := st.HeldText()
			if err == nil && now.Composer == harness.ComposerHolding {
				held = now.HeldText()
			}
			return fmt.Errorf("its composer held %q and was not provably empty after the harness's clear; it may still hold %q", Clip(st.HeldText(), heldRunes), Clip(held, heldRunes))
		}
	}
}

// Clip shortens held text to n runes at most, for a one-line message.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}

// heldRunes is how much of held text a message quotes.
const heldRunes = 60

// drawnBase is waitDrawn's budget for a text of no length.
const drawnBase = 6 * time.Second

// submitBySig is Submit for a harness with verified screen signatures: the
// text is typed once; Enter waits until the composer shows it (codex takes
// an Enter in its paste burst as a newline) and then the harness's settle
// for a paste or for typed keys (gemini turns an Enter within ~50 ms into
// a newline, claude loses one after a paste now and then); the submit is
// confirmed only when the composer reads empty again. Text never drawn
// gets no Enter at all. A OneEnter harness gets a second Enter only on
// proof that the first submitted nothing: its log's (cline), or its
// screen showing the Enter taken as a newline (gemini, starved in its
// paste window).
func submitBySig(ctx context.Context, b backends.Backend, ep backends.Endpoint, text string, sig harness.ScreenSig, o Options) Result {
	tail, newlines := tailOf(text), strings.Count(text, "\n")
	if err := b.SendText(ctx, ep, text); err != nil {
		return Result{Verdict: SendFailed, Err: err}
	}
	left, drawn := waitDrawn(ctx, b, ep, sig, tail, newlines, len(text), o)
	if !drawn {
		return Result{Verdict: Unproven, Undrawn: true}
	}
	settle := settleBeforeEnter(b, sig, text)
	if settle > 0 && backends.Sleep(ctx, settle) != nil {
		return Result{Verdict: Unproven}
	}
	var last backends.Screen
	if sig.OneEnter {
		o.Retries, o.ConfirmWait = 0, o.ConfirmWait+o.BusyRedraw
		if sig.EnterBecomesNewline && !endsInNewline(text) {
			logged := o.NothingTaken
			o.NothingTaken = func() bool {
				return last.Cursor && sig.NewlineTaken(last.Lines, last.CursorY, last.CursorX) || logged != nil && logged()
			}
		}
		if o.NothingTaken != nil && !o.Popup {
			o.Retries = 1
		}
	}
	res := pressEnter(ctx, b, ep, text, o, left-settle, withTurn(ctx, b, ep, func(s backends.Screen) ComposerState {
		last = s
		return sigClassify(sig, s, tail, newlines)
	}))
	// A composer let go of the text either way; a queue listing it says
	// it waits behind the turn, not submitted.
	if res.Verdict == Submitted && sig.Queued(last.Lines, tail) {
		res.Verdict = Queued
	}
	if res.Verdict == Unproven && o.Popup {
		res.Replaced = popupReplacement(sig, last, text)
	}
	return res
}

// endsInNewline reports a text whose paste alone leaves the cursor on a
// blank row under it (or whose trailing backslash makes gemini's Enter a
// newline by design), so that row proves nothing of its Enter.
func endsInNewline(text string) bool {
	t := strings.TrimRight(text, " \t")
	return strings.HasSuffix(t, "\n") || strings.HasSuffix(t, "\r") || strings.HasSuffix(t, "\\")
}

// popupReplacement is the other slash command the composer holds after
// Enter chose it from the completion popup the typed one opened, or "".
func popupReplacement(sig harness.ScreenSig, last backends.Screen, text string) string {
	st := sig.ReadScreen(last.Lines)
	held := strings.TrimSpace(st.HeldText())
	if st.Dialog != "" || st.Composer != harness.ComposerHolding || !strings.HasPrefix(held, "/") || ComposerDigest(held) == ComposerDigest(text) {
		return ""
	}
	return held
}

// settleBeforeEnter is how long text drawn on b waits for its Enter: the
// harness's settle for the way b delivered it, pasted or typed.
func settleBeforeEnter(b backends.Backend, sig harness.ScreenSig, text string) time.Duration {
	return sig.Settle(backends.SendsAsPaste(b, text))
}

// waitDrawn waits until the composer shows the typed text, and for a slash
// command until its popup stops changing, bounded by the echo budget grown
// with the text's length n: codex drew 400 typed characters in up to 0.6
// s, and a paste takes sizeWait more. The base is generous because text
// typed and never seen gets no Enter and stays in the composer: a loaded
// opencode (CI, two agents on two cores) drew an 84-byte text more than
// 2 s after it was typed. It returns the budget left.
func waitDrawn(ctx context.Context, b backends.Backend, ep backends.Endpoint, sig harness.ScreenSig, tail string, newlines, n int, o Options) (time.Duration, bool) {
	limit := max(drawnBase, sig.DrawWait) + time.Duration(min(n, 512))*time.Millisecond/2 + sizeWait(n)
	if o.EchoWait > limit {
		limit = o.EchoWait
	}
	if o.Popup {
		limit += o.SlashWait
	}
	deadline := time.Now().Add(limit)
	poll := backends.Backoff{Max: max(o.Poll, maxPoll)}
	seen, prev := false, ""
	for {
		if s, err := b.Capture(ctx, ep); err == nil && holdsTail(sig, sig.ReadScreen(s.Lines), tail, newlines) {
			cur := strings.Join(s.Lines, "\n")
			if !o.Popup || (seen && cur == prev) {
				return time.Until(deadline), true
			}
			seen, prev = true, cur
		}
		if !pollUntil(ctx, &poll, deadline) {
			return 0, false
		}
	}
}
