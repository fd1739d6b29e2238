package deliver

import (
	"context"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/harness"
)

// arrivingComposer is a fakeComposer whose typed text reaches the agent a
// chunk per screen read, as a long paste does: the composer shows its head
// first and its tail last, and an Enter pressed meanwhile is taken only once
// the whole text is in (the terminal delivers it after the paste).
type arrivingComposer struct {
	fakeComposer
	pending string
	chunk   int
	entered bool
}

func (f *arrivingComposer) SendText(_ context.Context, _ backends.Endpoint, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.texts = append(f.texts, text)
	f.pending = text
	return nil
}

func (f *arrivingComposer) SendKey(_ context.Context, _ backends.Endpoint, k harness.Key) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, k)
	if k == harness.KeyEnter {
		f.enters++
		f.entered = true
		f.take()
	}
	return nil
}

// take submits the composer once the whole text is in and Enter came.
func (f *arrivingComposer) take() {
	if f.entered && f.pending == "" && f.composer != "" {
		f.history = append(f.history, "you: "+f.composer[len(f.composer)-20:])
		f.composer = ""
	}
}

func (f *arrivingComposer) Capture(ctx context.Context, ep backends.Endpoint) (backends.Screen, error) {
	f.mu.Lock()
	n := min(f.chunk, len(f.pending))
	f.composer += f.pending[:n]
	f.pending = f.pending[n:]
	f.take()
	f.mu.Unlock()
	return f.fakeComposer.Capture(ctx, ep)
}

// submitted reports whether the agent took the whole text.
func (f *arrivingComposer) submitted() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending == "" && f.composer == "" && len(f.history) == 1
}

// The early-confirm regression of issue 15: a long message whose head is
// drawn (the composer line changed) while its tail is still on the way is
// never confirmed; it is confirmed once the agent took all of it.
func TestALongMessageIsNotConfirmedBeforeItsTailIsDrawn(t *testing.T) {
	text := strings.Repeat("lorem ipsum dolor sit amet ", 200) + "the very end"
	f := &arrivingComposer{chunk: 500}
	o := fastOptions()
	o.EchoWait = 5 * time.Second // a bound: the tail shows after 11 reads
	res := Submit(context.Background(), f, backends.Endpoint{}, text, o)
	if res.Verdict == Submitted && !f.submitted() {
		t.Fatalf("confirmed while the agent held %d of %d bytes", len(f.composer), len(text))
	}
	if res.Verdict != Submitted || res.Enters != 1 {
		t.Fatalf("verdict %s after %d Enter, want submitted after one", res.Verdict, res.Enters)
	}

	// Its tail never drawn within the budget: no Enter at all, unconfirmed.
	f = &arrivingComposer{chunk: 1}
	res = Submit(context.Background(), f, backends.Endpoint{}, text, fastOptions())
	if res.Verdict != Unproven || res.Enters != 0 {
		t.Fatalf("a text never drawn whole: verdict %s after %d Enter, want unconfirmed with none", res.Verdict, res.Enters)
	}
	// The next send waits for a late draw of it before typing.
	if typed := res.Typed(text, time.Now()); !typed.Undrawn || typed.Submitted {
		t.Fatalf("typed record %+v, want undrawn and not submitted", typed)
	}
}

// By signature, claude's collapsed placeholder proves a paste only when its
// line counts add up to the whole text.
func TestACollapsedPasteIsHeldOnlyWhenItsCountsAddUpToTheText(t *testing.T) {
	h, _ := harness.Lookup("claude")
	sig, _ := h.Screen()
	text := strings.Repeat("a line\n", 29) + "the end"
	screen := func(composer string) harness.ScreenState {
		rule := strings.Repeat("─", 40)
		return sig.ReadScreen([]string{"claude", rule, "❯ " + composer, rule, "  ⏵⏵ bypass permissions on (shift+tab to cycle)"})
	}
	newlines := strings.Count(text, "\n")
	for composer, want := range map[string]bool{
		"[Pasted text #1 +29 lines]":                           true,
		"[Pasted text #1 +12 lines]":                           false, // the head of it
		"[Pasted text #1 +12 lines][Pasted text #2 +17 lines]": true,  // split in two pieces
		"[Pasted text #1 +12 lines][Pasted text #2 +3 lines]":  false,
	} {
		if got := holdsTail(sig, screen(composer), tailOf(text), newlines); got != want {
			t.Errorf("%s: held = %v, want %v", composer, got, want)
		}
	}
}

// Polls back off: a wait of a second costs a handful of screen reads, not
// one every 10 ms.
func TestTheConfirmWaitBacksOff(t *testing.T) {
	f := &fakeComposer{}
	reads := 0
	state := waitState(context.Background(), time.Second, 10*time.Millisecond, func() (ComposerState, bool) {
		reads++
		_, _ = f.Capture(context.Background(), backends.Endpoint{})
		return Holding, true
	})
	if state != Holding || reads > 20 {
		t.Fatalf("a 1 s wait read the screen %d times (state %v); want it backed off to at most 20", reads, state)
	}
}
