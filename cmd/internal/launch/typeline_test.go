package launch

import (
	"fmctl/harness"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInputLineJoinsTheRowsTheLaunchLineSpans(t *testing.T) {
	line := "claude 'Read the brief at /h/data/t1/brief.md'"
	cases := []struct {
		rows []string
		got  string
		span int
	}{
		{[]string{"old output", "$ " + line}, "$ " + line, 1},
		// zsh breaks a long input line into rows itself
		{[]string{"old output", "% claude 'Read the bri", "ef at /h/data/t1/brie", "f.md'"}, "% " + line, 3},
		{[]string{"$ claude 'Read the brief"}, "$ claude 'Read the brief", 0},
		{nil, "", 0},
	}
	for _, c := range cases {
		got, span := inputLine(c.rows, line)
		if got != c.got || span != c.span {
			t.Errorf("inputLine(%q) = %q, %d; want %q, %d", c.rows, got, span, c.got, c.span)
		}
	}
}

func TestBeganWithAcceptsOnlyThePromptTheLineBeganWith(t *testing.T) {
	before := []string{"$ echo X", "$ echo Y"}
	if !beganWith(before, "$", 1) {
		t.Error("the prompt of the last row was not accepted")
	}
	if beganWith(before, "$ echo X", 1) {
		t.Error("text from an earlier row, beyond the launch line's span, was taken for the prompt")
	}
	if beganWith([]string{"$"}, "$ echo X", 2) {
		t.Error("text that arrived after the clear was taken for the prompt")
	}
}

// A relaunch types its line below the old agent's screen: the old gemini's
// drawn composer and launch-prompt turn (a real capture) must not read as
// the new agent ready before it has drawn anything of its own.
func TestTheOldAgentAboveTheLaunchLineIsNotTheNewOneReady(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "captures", "gemini-0.61.0", "basic", "01-spawned.txt"))
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	h, _ := harness.Lookup("gemini")
	sig, ok := h.Screen()
	if !ok {
		t.Fatal("gemini has no screen signature")
	}
	if !sig.ReadScreen(old).Launched(sig) {
		t.Fatal("the capture does not read as a launched gemini; the test proves nothing")
	}
	line := "FM_EVENT_KEY=\"$(cat '/h/state/t1.event-key')\" gemini --approval-mode=yolo -i 'Read the brief at /h/data/t1/brief.md and follow it exactly.'"
	relaunched := append(append([]string{}, old...), "bash-5.2# "+line, "")
	if sig.ReadScreen(launchedRows(relaunched, line)).Launched(sig) {
		t.Error("the old agent's screen above the new launch line read as the new agent launched")
	}
	drawn := append(append([]string{}, relaunched...), old[2:]...)
	if !sig.ReadScreen(launchedRows(drawn, line)).Launched(sig) {
		t.Error("the new agent's own screen below its launch line did not read as launched")
	}
}
