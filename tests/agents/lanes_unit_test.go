package agents

import (
	"strings"
	"testing"
)

// lanesOf is which harnesses share each lane dealLanes made, in deal order.
func lanesOf(names ...string) []string {
	var driven []profile
	for _, n := range names {
		driven = append(driven, lookupProfile(n))
	}
	lanes := dealLanes(driven, 2)
	var order []chan struct{}
	members := map[chan struct{}][]string{}
	for _, p := range driven {
		l := lanes[p.name]
		if _, ok := members[l]; !ok {
			order = append(order, l)
		}
		members[l] = append(members[l], p.name)
	}
	var out []string
	for _, l := range order {
		out = append(out, strings.Join(members[l], ","))
	}
	return out
}

// All nine: the two slow starters split, and the quick ones even the
// lanes out (the starved run at 7312c83 put opencode and kilo in one lane
// and the seven others in the other, idle for 16 minutes of its 36).
func TestDealLanesSplitsTheSlowStarters(t *testing.T) {
	got := lanesOf("claude", "codex", "opencode", "kilo", "pi", "gemini", "qwen", "copilot", "cline")
	want := []string{"claude,opencode,pi,qwen,cline", "codex,kilo,gemini,copilot"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Fatalf("lanes %q, want %q", got, want)
	}
}

// CI's thirds: a slow starter alone in one lane, or three quick ones
// dealt two and one; no lane is left empty.
func TestDealLanesKeepsEveryLaneBusyInAThird(t *testing.T) {
	for _, c := range []struct {
		third []string
		want  string
	}{
		{[]string{"claude", "codex", "opencode"}, "claude,codex | opencode"},
		{[]string{"pi", "gemini", "qwen"}, "pi,qwen | gemini"},
		{[]string{"copilot", "cline", "kilo"}, "copilot,cline | kilo"},
	} {
		if got := strings.Join(lanesOf(c.third...), " | "); got != c.want {
			t.Errorf("%v: lanes %q, want %q", c.third, got, c.want)
		}
	}
}
