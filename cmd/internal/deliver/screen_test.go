package deliver

import (
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
	for _, c := range cases {
		sig, s := realScreen(t, c.h, c.file)
		if got := sigClassify(sig, s, c.tail, 0); got != c.want {
			t.Errorf("%s/%s tail %q: %v, want %v", c.h, c.file, c.tail, got, c.want)
		}
	}
}

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
	tmux := &backends.Tmux{}
	long := strings.Repeat("x", 600)
	for _, c := range []struct {
		name string
		b    backends.Backend
		sig  harness.ScreenSig
		text string
		want time.Duration
	}{
		{"claude typed", tmux, claude, "hello", 0},
		{"claude multi-line paste", tmux, claude, "a\nb", claude.PasteSettle},
		{"claude long paste", tmux, claude, long, claude.PasteSettle},
		{"gemini typed", tmux, gemini, "hello", gemini.TypedSettle},
		{"gemini paste", tmux, gemini, "a\nb", gemini.PasteSettle},
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
