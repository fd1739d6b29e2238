package deliver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/harness"
)

func realScreen(t *testing.T, h, name string) (harness.ScreenSig, backends.Screen) {
	t.Helper()
	hh, _ := harness.Lookup(h)
	sig, ok := hh.Screen()
	if !ok {
		t.Fatalf("%s has no screen signatures", h)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "captures", h+"-"+sig.Release, name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return sig, backends.Screen{Lines: strings.Split(string(data), "\n")}
}

// After Enter, a real composer reads Holding while it still shows the text
// (or its collapsed-paste placeholder), Cleared once empty, and Unknown at a
// dialog or holding other text.
func TestSigClassifyOnRealCaptures(t *testing.T) {
	cases := []struct {
		h, file, tail string
		want          ComposerState
	}{
		{"claude", "composer-text", "ello one", Holding},
		{"claude", "composer-text", "other", Unknown},
		{"claude", "composer-empty-after-400", "ello one", Cleared},
		{"claude", "help", "/help", Unknown},
		{"codex", "help", "/help", Holding},
		{"pi", "paste-collapsed", "9a0b1c2d", Holding},
		{"gemini", "composer-text", "ello one", Holding},
		{"gemini", "paste-collapsed", "9a0b1c2d", Holding},
		{"gemini", "composer-empty", "ello one", Cleared},
	}
	_, busy := realScreen(t, "gemini", "yolo-busy")
	for i, l := range busy.Lines {
		if strings.HasPrefix(l, " *   Type your message") {
			busy.Lines[i] = " *   message 3 of five 66647a"
		}
	}
	for _, c := range cases {
		sig, s := realScreen(t, c.h, c.file)
		if got := sigClassify(sig, s, c.tail, 0); got != c.want {
			t.Errorf("%s/%s tail %q: %v, want %v", c.h, c.file, c.tail, got, c.want)
		}
	}
	gemini, _ := harness.Lookup("gemini")
	sig, _ := gemini.Screen()
	if got := sigClassify(sig, busy, "e 66647a", 0); got != HoldingBusy {
		t.Errorf("gemini busy with the text in its composer: %v, want HoldingBusy", got)
	}
}

// pastingComposer says which texts go as one paste as the tmux and herdr
// adapters do (backends.NeedsPaste).
type pastingComposer struct{ fakeComposer }

func (*pastingComposer) Pastes(text string) bool { return backends.NeedsPaste(text) }

// TestSettleBeforeEnterFollowsHowTheTextWasSent: claude loses an Enter
// right after a paste but never after typed keys; gemini reads either as
// a paste; a backend that does not say how it sends is taken to paste.
func TestSettleBeforeEnterFollowsHowTheTextWasSent(t *testing.T) {
	sigOf := func(name string) harness.ScreenSig {
		h, ok := harness.Lookup(name)
		if !ok {
			t.Fatalf("no harness %s", name)
		}
		sig, ok := h.Screen()
		if !ok {
			t.Fatalf("%s has no screen signatures", name)
		}
		return sig
	}
	claude, gemini := sigOf("claude"), sigOf("gemini")
	paster := &pastingComposer{}
	long := strings.Repeat("x", 600)
	for _, c := range []struct {
		name string
		b    backends.Backend
		sig  harness.ScreenSig
		text string
		want time.Duration
	}{
		{"claude typed", paster, claude, "hello", 0},
		{"claude multi-line paste", paster, claude, "a\nb", claude.PasteSettle},
		{"claude long paste", paster, claude, long, claude.PasteSettle},
		{"gemini typed", paster, gemini, "hello", gemini.TypedSettle},
		{"gemini paste", paster, gemini, "a\nb", gemini.PasteSettle},
		{"claude on a backend that does not say", &fakeComposer{}, claude, "hello", claude.PasteSettle},
	} {
		if got := settleBeforeEnter(c.b, c.sig, c.text); got != c.want {
			t.Errorf("%s: settle %v, want %v", c.name, got, c.want)
		}
	}
	if claude.PasteSettle == 0 || gemini.TypedSettle == 0 || claude.TypedSettle != 0 {
		t.Errorf("settles: claude paste %v typed %v, gemini typed %v; want claude's paste and gemini's typed set, claude's typed none",
			claude.PasteSettle, claude.TypedSettle, gemini.TypedSettle)
	}
}

// geminiFrame is a fake agent drawn as gemini draws itself: a real capture
// whose composer row shows what the fake's composer holds.
type geminiFrame struct {
	*fakeComposer
	frame []string // a capture; the composer row is replaced
}

func (g *geminiFrame) Capture(context.Context, backends.Endpoint) (backends.Screen, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	lines := append([]string(nil), g.frame...)
	for i, l := range lines {
		if prompt := l[:min(len(l), 5)]; prompt == " *   " || prompt == " >   " {
			if g.composer != "" {
				lines[i] = prompt + g.composer
			}
			return backends.Screen{Lines: lines, CursorY: i, CursorX: 5 + len(g.composer), Cursor: true}, nil
		}
	}
	return backends.Screen{Lines: lines}, nil
}

// An Enter pressed while gemini runs a turn (or its hooks) is queued, and
// gemini may draw the text for a while after: a second Enter would submit
// the text twice (the real-agent tier saw "X\n\nX" recorded), so gemini
// gets one Enter, busy or idle, and a text it still draws is unconfirmed.
func TestGeminiGetsOneEnter(t *testing.T) {
	sig, busy := realScreen(t, "gemini", "yolo-busy")
	_, idle := realScreen(t, "gemini", "composer-empty")
	for _, c := range []struct {
		name       string
		frame      []string
		want       Verdict
		wantEnters int
	}{
		{"busy", busy.Lines, Unproven, 1},
		{"idle", idle.Lines, Pending, 1},
	} {
		f := &geminiFrame{fakeComposer: &fakeComposer{}, frame: c.frame}
		o := fastOptions()
		o.Screen = &sig
		o.BusyRedraw = 50 * time.Millisecond
		res := Submit(context.Background(), f, backends.Endpoint{Target: "s:fm-t1"}, "message 3 of five 66647a", o)
		if res.Verdict != c.want || f.enters != c.wantEnters {
			t.Errorf("%s: verdict %s after %d Enters, want %s after %d", c.name, res.Verdict, f.enters, c.want, c.wantEnters)
		}
	}
}

// clineFrame is a fake cline drawn from a real capture whose composer row
// (at column 0, between the rules) shows what the fake's composer holds;
// its first drop Enters are lost, as cline lost one pressed as a turn
// ended (enter-dropped-at-turn-end).
type clineFrame struct {
	*fakeComposer
	frame []string
	drop  int
}

func (c *clineFrame) SendKey(ctx context.Context, ep backends.Endpoint, k harness.Key) error {
	c.mu.Lock()
	if k == harness.KeyEnter && c.drop > 0 {
		c.drop--
		c.enters++
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	return c.fakeComposer.SendKey(ctx, ep, k)
}

func (c *clineFrame) Capture(context.Context, backends.Endpoint) (backends.Screen, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := append([]string(nil), c.frame...)
	for i, l := range lines {
		if strings.HasPrefix(l, "❯ ") {
			text := c.composer
			if text == "" {
				text = "Ask anything..."
			}
			lines[i] = "❯ " + text
			return backends.Screen{Lines: lines, CursorY: i, CursorX: 2 + len(c.composer), Cursor: true}, nil
		}
	}
	return backends.Screen{Lines: lines}, nil
}

// cline gets one Enter, as gemini does (a second one while its turn
// starts submitted the prompt twice), unless its log, read right before
// it, proves it took nothing since the text was typed: then an Enter it
// dropped (as a turn ended, the text left in its idle composer) is
// pressed once more. Never for a slash command, whose Enter may have run
// it without a prompt logged.
func TestClineGetsASecondEnterOnlyOnItsLogsProof(t *testing.T) {
	sig, s := realScreen(t, "cline", "enter-dropped-at-turn-end")
	const text = "message 2 of round 17 eeaee7"
	if st := sig.ReadScreen(s.Lines); st.Composer != harness.ComposerHolding || strings.TrimSpace(st.HeldText()) != text || st.Busy {
		t.Fatalf("the capture reads %+v; want idle, its composer holding %q", st, text)
	}
	for _, c := range []struct {
		name         string
		text         string
		nothingTaken func() bool
		want         Verdict
		wantEnters   int
	}{
		{"the log shows nothing taken", text, func() bool { return true }, Submitted, 2},
		{"the log shows a prompt taken", text, func() bool { return false }, Pending, 1},
		{"no log to read", text, nil, Pending, 1},
		{"a slash command", "/help", func() bool { return true }, Pending, 1},
	} {
		f := &clineFrame{fakeComposer: &fakeComposer{clearOn: 1}, frame: s.Lines, drop: 1}
		o := fastOptions()
		o.Screen = &sig
		o.BusyRedraw = 50 * time.Millisecond
		o.SlashWait = time.Millisecond
		o.Popup = strings.HasPrefix(c.text, "/")
		o.NothingTaken = c.nothingTaken
		res := Submit(context.Background(), f, backends.Endpoint{Target: "s:fm-t1"}, c.text, o)
		if res.Verdict != c.want || f.enters != c.wantEnters {
			t.Errorf("%s: verdict %s after %d Enters, want %s after %d", c.name, res.Verdict, f.enters, c.want, c.wantEnters)
		}
	}
}

// A text gemini lists under "Queued (press ↑ to edit):" was taken but not
// submitted: gemini submits its queue as one message when the turn ends.
// The composer reads empty either way, so only the queue tells them apart.
func TestGeminiQueueIsNotASubmit(t *testing.T) {
	for _, c := range []struct {
		file, tail string
		queued     bool
	}{
		{"queued-during-backoff", tailOf("sent during the back-off 1424a4"), true},
		{"busy-queued", tailOf("queued while busy"), true},
		{"busy-queued", tailOf("another text"), false},
		{"composer-empty", tailOf("queued while busy"), false},
		// Past three texts the list is folded: the fourth is not drawn.
		{"queue-folded", tailOf("sent into the outage 3 of five 47ad39"), true},
		{"queue-folded", tailOf("sent into the outage 4 of five 3f4637"), true},
	} {
		sig, s := realScreen(t, "gemini", c.file)
		if got := sig.Queued(s.Lines, c.tail); got != c.queued {
			t.Errorf("%s: Queued(%q) = %v, want %v", c.file, c.tail, got, c.queued)
		}
	}
	// Through Submit: a fake gemini that moves the text into its queue on
	// Enter is reported queued, not submitted.
	sig, s := realScreen(t, "gemini", "queued-during-backoff")
	f := &queueingGemini{geminiFrame: geminiFrame{fakeComposer: &fakeComposer{}, frame: s.Lines}}
	o := fastOptions()
	o.Screen = &sig
	o.BusyRedraw = 50 * time.Millisecond
	if res := Submit(context.Background(), f, backends.Endpoint{Target: "s:fm-t1"}, "one more text 5e6f7a", o); res.Verdict != Queued || f.enters != 1 {
		t.Errorf("verdict %s after %d Enters, want queued after 1", res.Verdict, f.enters)
	}
}

// claude draws a text it took during a turn indented above its composer,
// pi as a steer; both record it only when the turn takes it. Their
// transcript rows (claude's "❯ " at the margin) are not a queue.
func TestQueueRowsAreNotASubmit(t *testing.T) {
	for _, c := range []struct {
		h, file, tail string
		queued        bool
	}{
		{"claude", "busy-queued", tailOf("queued while busy"), true},
		{"claude", "busy-queued", tailOf("please fmhang now"), false},
		{"claude", "busy", tailOf("please fmhang now"), false},
		{"claude", "after-interrupt-2", tailOf("queued while busy"), false},
		{"pi", "busy-queued", tailOf("queued while busy"), true},
		{"pi", "busy-queued", tailOf("please fmhang now"), false},
		{"pi", "busy", tailOf("queued while busy"), false},
		// qwen lists it under its busy line, two spaces in.
		{"qwen", "busy-queued", tailOf("queued while busy"), true},
		{"qwen", "busy-queued", tailOf("please fmhang busy"), false},
		{"qwen", "busy", tailOf("please fmhang busy"), false},
		{"qwen", "after-interrupt-restored", tailOf("queued while busy"), false},
		// cline lists it in a box, four spaces inside the border; once it
		// kept one there after its turn ended, idle.
		{"cline", "busy-queued", tailOf("queued while busy"), true},
		{"cline", "busy-queued", tailOf("please fmhang now"), false},
		{"cline", "busy", tailOf("please fmhang now"), false},
		{"cline", "after-interrupt-queued", tailOf("queued while busy"), false},
		{"cline", "idle-queue-stranded", tailOf("first message right after spawn fba638"), true},
	} {
		sig, s := realScreen(t, c.h, c.file)
		if got := sig.Queued(s.Lines, c.tail); got != c.queued {
			t.Errorf("%s/%s: Queued(%q) = %v, want %v", c.h, c.file, c.tail, got, c.queued)
		}
		// An interrupt waits for a queue to come back only where one is drawn.
		if got := sig.ShowsQueue(s.Lines); got != c.queued && c.tail != tailOf("please fmhang busy") && c.tail != tailOf("please fmhang now") {
			t.Errorf("%s/%s: ShowsQueue = %v, want %v", c.h, c.file, got, c.queued)
		}
	}
}

// queueingGemini draws gemini's queue: Enter moves the composer's text
// into the list under its queue head.
type queueingGemini struct {
	geminiFrame
}

func (q *queueingGemini) SendKey(ctx context.Context, ep backends.Endpoint, k harness.Key) error {
	q.mu.Lock()
	if k == harness.KeyEnter && q.composer != "" {
		for i, l := range q.frame {
			if strings.Contains(l, "Queued (press") {
				q.frame = append(q.frame[:i+1], append([]string{"    " + q.composer}, q.frame[i+1:]...)...)
				break
			}
		}
		q.composer = ""
	}
	q.mu.Unlock()
	return q.fakeComposer.SendKey(ctx, ep, k)
}

func (q *queueingGemini) Capture(ctx context.Context, ep backends.Endpoint) (backends.Screen, error) {
	return q.geminiFrame.Capture(ctx, ep)
}

// Enter on a slash command whose completion popup held another command
// (kilo completes an unknown "/nosuchcmd" to one of its own) leaves that
// one in the composer: fmctl's keys put it there, so it is recorded as
// fmctl's own text for the next send to clear, never taken for a draft.
func TestPopupReplacementIsFmctlsOwn(t *testing.T) {
	sig, s := realScreen(t, "opencode", "composer-text")
	replaced := make([]string, len(s.Lines))
	for i, l := range s.Lines {
		replaced[i] = strings.Replace(l, "hello one", "/kilo-config:skill", 1)
	}
	if got := popupReplacement(sig, backends.Screen{Lines: replaced}, "/nosuchcmd"); got != "/kilo-config:skill" {
		t.Fatalf("popupReplacement = %q, want /kilo-config:skill", got)
	}
	for _, c := range []struct {
		name  string
		lines []string
		typed string
	}{
		{"the typed command itself", replaced, "/kilo-config:skill"},
		{"plain text held", s.Lines, "/nosuchcmd"},
	} {
		if got := popupReplacement(sig, backends.Screen{Lines: c.lines}, c.typed); got != "" {
			t.Errorf("%s: popupReplacement = %q, want none", c.name, got)
		}
	}
	res := Result{Verdict: Unproven, Replaced: "/kilo-config:skill"}
	typed := res.Typed("/nosuchcmd", time.Now())
	if typed.Owns(ComposerDigest("/kilo-config:skill")) == "" || typed.Submitted {
		t.Errorf("Typed = %+v, want the replacement as fmctl's own, not submitted", typed)
	}
}

// starvedGemini is a fake gemini drawn from the tier's captures of a real
// one starved in its paste window (tests/captures/gemini-0.61.0): the
// three lines held after their paste, the cursor at their end
// (paste-held-three-lines); after an Enter taken as a newline, the same
// text with the cursor on the blank row under it (enter-taken-as-newline);
// after an Enter taken as a submit, an empty composer. Its first newlines
// Enters become newlines; with stale, its first Enter submits and the
// screen is not redrawn, as while gemini runs its hooks.
type starvedGemini struct {
	*fakeComposer
	held, newline, empty backends.Screen
	newlines             int
	stale                bool
}

func (g *starvedGemini) Capture(context.Context, backends.Endpoint) (backends.Screen, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.composer == "":
		return g.empty, nil
	case g.enters == 0 || g.stale:
		return g.held, nil
	case g.enters <= g.newlines:
		return g.newline, nil
	}
	return g.empty, nil
}

// gemini takes an Enter inside its paste window as a newline, and a
// starved gemini keeps that window open past the paste's settle (the
// tier's basic group, oldest channel, under load: a three-line text left
// in the composer after one Enter). The newline drawn under the text, the
// cursor on it, proves that Enter submitted nothing, so one Enter more
// goes, and only then: a submit gemini has not redrawn yet, or a text
// that ends in a newline of its own, gets no second Enter.
func TestGeminiGetsASecondEnterOnlyWhenItsFirstBecameANewline(t *testing.T) {
	sig, held := realScreen(t, "gemini", "paste-held-three-lines")
	_, newline := realScreen(t, "gemini", "enter-taken-as-newline")
	_, empty := realScreen(t, "gemini", "second-enter-after-newline")
	// Where tmux put the cursor in the tier's run.
	held.CursorY, held.CursorX, held.Cursor = 32, 13, true
	newline.CursorY, newline.CursorX, newline.Cursor = 39, 3, true
	if !sig.NewlineTaken(newline.Lines, newline.CursorY, newline.CursorX) || sig.NewlineTaken(held.Lines, held.CursorY, held.CursorX) {
		t.Fatalf("NewlineTaken reads the newline capture %v and the held one %v; want true and false",
			sig.NewlineTaken(newline.Lines, newline.CursorY, newline.CursorX), sig.NewlineTaken(held.Lines, held.CursorY, held.CursorX))
	}
	const text = "line one 3bdfc5\nline two\nline three"
	for _, c := range []struct {
		name       string
		text       string
		newlines   int
		stale      bool
		want       Verdict
		wantEnters int
	}{
		{"the first Enter became a newline", text, 1, false, Submitted, 2},
		{"both became newlines", text, 2, false, Pending, 2},
		{"the first submitted, not yet redrawn", text, 0, true, Pending, 1},
		{"a text ending in a newline", text + "\n", 1, false, Pending, 1},
	} {
		g := &starvedGemini{fakeComposer: &fakeComposer{}, held: held, newline: newline, empty: empty, newlines: c.newlines, stale: c.stale}
		o := fastOptions()
		o.Screen = &sig
		o.BusyRedraw = 50 * time.Millisecond
		res := Submit(context.Background(), g, backends.Endpoint{Target: "s:fm-t1"}, c.text, o)
		if res.Verdict != c.want || g.enters != c.wantEnters {
			t.Errorf("%s: verdict %s after %d Enters, want %s after %d", c.name, res.Verdict, g.enters, c.want, c.wantEnters)
		}
	}
}
