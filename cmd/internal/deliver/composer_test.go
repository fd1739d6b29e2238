package deliver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/harness"
)

func at(y int, lines ...string) backends.Screen {
	return backends.Screen{Lines: lines, CursorY: y, Cursor: true}
}

func stateName(s ComposerState) string {
	return map[ComposerState]string{Unknown: "Unknown", Holding: "Holding", Cleared: "Cleared"}[s]
}

func TestClassifyComposerScreens(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 20) + "final words."
	wrapAt := len(long) - 3 // the tail straddles the wrap
	cases := []struct {
		name               string
		before, typed, now backends.Screen
		beforeKnown        bool
		text               string
		want               ComposerState
	}{
		{"cursor line holds the text", at(1, "history", "> "), at(1, "history", "> hello world"), at(1, "history", "> hello world"), true, "hello world", Holding},
		{"composer cleared after Enter", at(1, "history", "> "), at(1, "history", "> hello world"), at(2, "history", "hello world", "> "), true, "hello world", Cleared},
		{"nothing ever changed", at(0, "> "), at(0, "> "), at(0, "> "), true, "hello world", Unknown},
		{"nothing changed and before unknown", backends.Screen{}, at(0, "> "), at(0, "> "), false, "hello world", Unknown},
		{"wrapped long text still held", at(0, "> "), at(1, "> "+long[:wrapAt], long[wrapAt:]), at(1, "> "+long[:wrapAt], long[wrapAt:]), true, long, Holding},
		{"wrapped long text cleared", at(0, "> "), at(1, "> "+long[:wrapAt], long[wrapAt:]), at(0, "> "), true, long, Cleared},
		{"bordered composer holds", at(1, "╭──────────╮", "│ >        │", "╰──────────╯"), at(1, "╭──────────╮", "│ > hello  │", "╰──────────╯"), at(1, "╭──────────╮", "│ > hello  │", "╰──────────╯"), true, "hello", Holding},
		{"bordered composer tight border", at(0, "│ > │"), at(0, "│ > hello │"), at(0, "│ > hello │"), true, "hello", Holding},
		{"bordered composer cleared", at(1, "top", "│ >        │"), at(1, "top", "│ > hello  │"), at(2, "top", "  hello", "│ >        │"), true, "hello", Cleared},
		// the submitted text echoed into the transcript right above an
		// empty composer is the submit succeeding, not the text being held
		{"transcript echo above an empty composer", at(0, "> "), at(0, "> hello"), at(1, "hello", "> "), true, "hello", Cleared},
		{"transcript echo above an empty bordered composer", at(0, "│ >      │"), at(0, "│ > hello │"), at(1, "user: hello", "│ >      │"), true, "hello", Cleared},
		{"transcript echo above a blank composer line", at(0, ""), at(0, "hello"), at(1, "hello", ""), true, "hello", Cleared},
		// a long paste shows as a placeholder, never as the text's tail
		{"placeholder paste held", at(0, "> "), at(0, "> [Pasted text #1 +2 lines]"), at(0, "> [Pasted text #1 +2 lines]"), true, "a\nb\nthird line", Holding},
		{"placeholder paste cleared", at(0, "> "), at(0, "> [Pasted text #1 +2 lines]"), at(1, "[Pasted text #1 +2 lines]", "> "), true, "a\nb\nthird line", Cleared},
		{"placeholder never seen, before unknown", backends.Screen{}, at(0, "> [Pasted text #1 +2 lines]"), at(0, "> "), false, "a\nb\nthird line", Unknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Classify(c.before, c.typed, c.now, c.beforeKnown, tailOf(c.text))
			if got != c.want {
				t.Errorf("Classify = %s, want %s (tail %q)", stateName(got), stateName(c.want), tailOf(c.text))
			}
		})
	}
}

func TestEchoed(t *testing.T) {
	tail := tailOf("hello world")
	if !Echoed(at(0, "> "), at(0, "> hello world"), true, tail) {
		t.Error("text on the cursor line not seen as echoed")
	}
	if !Echoed(backends.Screen{}, at(0, "> hello world"), false, tail) {
		t.Error("tail visible, before unknown: still echoed")
	}
	if Echoed(at(0, "> "), at(0, "> "), true, tail) {
		t.Error("an unchanged screen counted as echoed")
	}
	if !Echoed(at(0, "> "), at(0, "> [Pasted text #1 +2 lines]"), true, tailOf("a\nb\nc")) {
		t.Error("a paste placeholder (composer changed) not seen as echoed")
	}
	if Echoed(backends.Screen{}, at(0, "> [Pasted text #1 +2 lines]"), false, tailOf("a\nb\nc")) {
		t.Error("with no before screen a placeholder proves nothing")
	}
	// without a cursor the last non-empty line is the composer
	if !Echoed(backends.Screen{Lines: []string{"> hello world", "", ""}}, backends.Screen{Lines: []string{"> hello world", ""}}, false, tail) {
		t.Error("cursorless screen: last non-empty line not read")
	}
}

func TestTailOf(t *testing.T) {
	for in, want := range map[string]string{
		"hello":                "hello",
		"hello world":          "lo world",
		"  padded   \n\n":      "padded",
		"line one\nline two\n": "line two",
		"ünïcödé😀 tail":        "dé😀 tail",
		"":                     "",
	} {
		if got := tailOf(in); got != want {
			t.Errorf("tailOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakeComposer is an in-memory backend with one agent composer: typed text
// sits on the cursor line until the clearOn-th Enter submits it.
type fakeComposer struct {
	mu         sync.Mutex
	composer   string
	history    []string
	enters     int
	clearOn    int // 0 = never clears
	captureErr error
	sendErr    error
	keys       []harness.Key
	texts      []string
}

func (f *fakeComposer) Name() string { return "fake" }

func (f *fakeComposer) SendText(_ context.Context, _ backends.Endpoint, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sendErr != nil {
		return f.sendErr
	}
	f.texts = append(f.texts, text)
	f.composer += text
	return nil
}

func (f *fakeComposer) SendKey(_ context.Context, _ backends.Endpoint, k harness.Key) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, k)
	if k == harness.KeyEnter {
		f.enters++
		if f.clearOn > 0 && f.enters >= f.clearOn && f.composer != "" {
			f.history = append(f.history, f.composer)
			f.composer = ""
		}
	}
	return nil
}

func (f *fakeComposer) Capture(context.Context, backends.Endpoint) (backends.Screen, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.captureErr != nil {
		return backends.Screen{}, f.captureErr
	}
	lines := append(append([]string{"welcome"}, f.history...), "> "+f.composer)
	return backends.Screen{Lines: lines, CursorY: len(lines) - 1, Cursor: true}, nil
}

func (f *fakeComposer) AgentState(context.Context, backends.Endpoint) backends.Observation {
	return backends.Observation{State: backends.StateAlive}
}
func (f *fakeComposer) CurrentPath(context.Context, backends.Endpoint) (string, error) {
	return "/w", nil
}
func (f *fakeComposer) Create(context.Context, backends.CreateSpec) ([]backends.Field, error) {
	return nil, errors.New("not supported")
}
func (f *fakeComposer) Kill(context.Context, backends.Endpoint) error { return nil }
func (f *fakeComposer) ValidateRecord(backends.Endpoint) error        { return nil }

var _ backends.Backend = (*fakeComposer)(nil)

func fastOptions() Options {
	return Options{Retries: 3, ConfirmWait: 30 * time.Millisecond, EchoWait: 30 * time.Millisecond,
		SlashWait: 60 * time.Millisecond, Poll: time.Millisecond}
}

func TestSubmit(t *testing.T) {
	cases := []struct {
		name       string
		fake       *fakeComposer
		want       Verdict
		wantEnters int
	}{
		{"clears on the first Enter", &fakeComposer{clearOn: 1}, Submitted, 1},
		{"clears on the second Enter", &fakeComposer{clearOn: 2}, Submitted, 2},
		{"never clears", &fakeComposer{}, Pending, 1 + fastOptions().Retries},
		{"capture always fails", &fakeComposer{clearOn: 1, captureErr: errors.New("capture broke")}, Unproven, 1},
		{"SendText fails", &fakeComposer{clearOn: 1, sendErr: errors.New("pane gone")}, SendFailed, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Submit(context.Background(), c.fake, backends.Endpoint{Target: "s:fm-t1"}, "hello world", fastOptions())
			if res.Verdict != c.want {
				t.Errorf("verdict = %s, want %s (err %v)", res.Verdict, c.want, res.Err)
			}
			if res.Enters != c.wantEnters || c.fake.enters != c.wantEnters {
				t.Errorf("Enters = %d (backend saw %d), want %d", res.Enters, c.fake.enters, c.wantEnters)
			}
			for _, k := range c.fake.keys {
				if k != harness.KeyEnter {
					t.Errorf("Submit pressed %s; only Enter may be re-pressed", k)
				}
			}
			if c.want == SendFailed {
				if res.Err == nil {
					t.Error("SendFailed carries no error")
				}
				if len(c.fake.keys) != 0 {
					t.Errorf("Enter pressed after SendText failed: %v", c.fake.keys)
				}
				return
			}
			if len(c.fake.texts) != 1 || c.fake.texts[0] != "hello world" {
				t.Errorf("text typed %q, want exactly once", c.fake.texts)
			}
		})
	}
}

func TestSubmitSlashCommandWaitsForThePopupToSettle(t *testing.T) {
	f := &fakeComposer{clearOn: 1}
	o := fastOptions()
	o.Popup = true
	start := time.Now()
	res := Submit(context.Background(), f, backends.Endpoint{}, "/exit", o)
	if res.Verdict != Submitted || res.Enters != 1 {
		t.Fatalf("slash submit = %+v", res)
	}
	if d := time.Since(start); d > o.SlashWait+o.ConfirmWait+time.Second {
		t.Errorf("slash submit took %v; the waits are bounds, not sleeps", d)
	}
}

func TestSubmitIsFastWhenTheComposerIsFast(t *testing.T) {
	o := DefaultOptions()
	start := time.Now()
	res := Submit(context.Background(), &fakeComposer{clearOn: 1}, backends.Endpoint{}, "hello world", o)
	if res.Verdict != Submitted {
		t.Fatalf("verdict %s", res.Verdict)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("an instant composer took %v; Submit must poll, not sleep its budget", d)
	}
}

func TestSubmitHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := DefaultOptions()
	o.ConfirmWait = 5 * time.Second
	start := time.Now()
	_ = Submit(ctx, &fakeComposer{}, backends.Endpoint{}, "hello world", o)
	if d := time.Since(start); d > time.Second {
		t.Errorf("a cancelled submit still waited %v", d)
	}
}

// A backend without a cursor (herdr, zellij): after the submit, the echo in
// the transcript becomes the last non-empty line above a blank composer. It
// must read as cleared, not as the composer still holding the text.
func TestCursorlessEchoAboveBlankComposerIsCleared(t *testing.T) {
	before := backends.Screen{Lines: []string{"agent", "> "}}
	typed := backends.Screen{Lines: []string{"agent", "> hello world"}}
	now := backends.Screen{Lines: []string{"agent", "you: hello world", "", ""}}
	if got := Classify(before, typed, now, true, tailOf("hello world")); got != Cleared {
		t.Fatalf("Classify = %v, want Cleared", got)
	}
	stuck := backends.Screen{Lines: []string{"agent", "> hello world"}}
	if got := Classify(before, typed, stuck, true, tailOf("hello world")); got != Holding {
		t.Fatalf("stuck composer: Classify = %v, want Holding", got)
	}
}

func TestHeldInputIsWhatSitsLeftOfTheCursor(t *testing.T) {
	cursorAt := func(x, y int, lines ...string) backends.Screen {
		return backends.Screen{Lines: lines, CursorY: y, Cursor: true, CursorX: x}
	}
	cases := []struct {
		name string
		s    backends.Screen
		want string
	}{
		{"leftover exit command", cursorAt(7, 1, "transcript", "> /exit"), "/exit"},
		{"empty composer", cursorAt(2, 1, "transcript", "> "), ""},
		{"framed empty composer", cursorAt(4, 1, "╭──╮", "│ > │", "╰──╯"), ""},
		{"framed held text", cursorAt(8, 1, "╭──╮", "│ > abc │", "╰──╯"), "abc"},
		{"placeholder after the cursor", cursorAt(2, 0, `> Try "fix lint errors"`), ""},
		{"codex prompt", cursorAt(7, 0, "› hello"), "hello"},
		{"wide runes count two cells", cursorAt(6, 0, "> 日本 placeholder"), "日本"},
		{"cursor column unknown", backends.Screen{Lines: []string{"> /exit"}, Cursor: true}, ""},
		{"cursor row unknown", backends.Screen{Lines: []string{"> /exit"}, CursorX: 7}, ""},
		{"cursor row out of range", cursorAt(3, 4, "> x"), ""},
	}
	for _, c := range cases {
		if got := HeldInput(c.s); got != c.want {
			t.Errorf("%s: HeldInput = %q, want %q", c.name, got, c.want)
		}
	}
}

// exitingComposer is an agent that ends on the first Enter and leaves its
// last frame, the exit command still in its composer, on the screen.
type exitingComposer struct {
	fakeComposer
	gone bool
}

func (f *exitingComposer) SendKey(ctx context.Context, ep backends.Endpoint, k harness.Key) error {
	f.mu.Lock()
	f.gone = f.gone || k == harness.KeyEnter
	f.mu.Unlock()
	return f.fakeComposer.SendKey(ctx, ep, k)
}

func (f *exitingComposer) AgentState(context.Context, backends.Endpoint) backends.Observation {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone {
		return backends.Observation{State: backends.StateDead}
	}
	return backends.Observation{State: backends.StateAlive}
}

// An exit command is taken once the agent is gone, even though the frame it
// left still shows the command held: the submit says so at the first look,
// not after its confirm window (nor with a second Enter into the shell).
func TestSubmitOfAnExitCommandEndsWhenTheAgentIsGone(t *testing.T) {
	for _, endsAgent := range []bool{true, false} {
		f := &exitingComposer{}
		o := fastOptions()
		o.ConfirmWait, o.EndsAgent = 2*time.Second, endsAgent
		o.EnterGate = func(obs backends.Observation) error {
			if obs.State != backends.StateAlive {
				return errors.New("agent gone")
			}
			return nil
		}
		start := time.Now()
		res := Submit(context.Background(), f, backends.Endpoint{}, "/exit", o)
		took := time.Since(start)
		if endsAgent && (res.Verdict != Submitted || took > time.Second) {
			t.Fatalf("EndsAgent: %+v after %v; want submitted at the first look after Enter", res, took)
		}
		if !endsAgent && (res.Verdict == Submitted || took < o.ConfirmWait) {
			t.Fatalf("without EndsAgent: %+v after %v; the leftover frame should read held for the window", res, took)
		}
		if len(f.keys) != 1 {
			t.Fatalf("keys %v, want one Enter", f.keys)
		}
	}
}
