package phrase

import "testing"

func TestEditDistanceCountsASwapAsOneEdit(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"claud", "claude", 1},
		{"hgih", "high", 1}, {"idel", "idle", 1}, {"Ecsape", "Escape", 1},
		{"tmx", "tmux", 1}, {"shipp", "ship", 1}, {"tt1", "t1", 1},
		{"ca", "abc", 3}, {"kitten", "sitting", 3},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestNearestOffersOnlyAPlausibleSlip(t *testing.T) {
	harnesses := []string{"claude", "codex", "opencode", "pi", "gemini", "pi-signed"}
	for _, c := range []struct {
		word string
		in   []string
		want string
	}{
		{"claud", harnesses, "claude"},
		{"codx", harnesses, "codex"},
		{"claude", harnesses, ""}, // already valid: nothing to suggest
		{"someagent", harnesses, ""},
		{"p", harnesses, ""}, // one letter is no evidence of anything
		{"hgih", []string{"low", "medium", "high", "xhigh", "max"}, "high"},
		{"idel", []string{"ready", "busy", "idle", "waiting", "dead"}, "idle"},
		{"Ecsape", []string{"Escape", "Enter", "C-c", "C-u"}, "Escape"},
		{"tt1", []string{"t1", "t2"}, "t1"}, // the first of the nearest
	} {
		if got := Nearest(c.word, c.in); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if got := DidYouMean("tmx", []string{"tmux", "herdr", "zellij"}); got != "; did you mean tmux?" {
		t.Errorf("DidYouMean = %q", got)
	}
}
