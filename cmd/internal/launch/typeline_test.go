package launch

import (
	"context"
	"errors"
	"fmctl/backends"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/harness/wiring"
	"fmctl/state"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// garbledShell is a pane shell that came back from its agent but starts
// its line editor only after the first launch line was typed: the
// terminal echoed that line, and the editor drew its prompt and the line
// again beside the echo, garbled (as captured from bash). Its clear kills
// the editor's line and leaves the echo and the prompt on screen.
type garbledShell struct {
	backends.Backend
	rows    []string
	typed   int
	clears  int
	garbles int // how many typed lines come out garbled
}

func (g *garbledShell) SendText(_ context.Context, _ backends.Endpoint, text string) error {
	g.typed++
	last := g.rows[len(g.rows)-1]
	if g.typed <= g.garbles {
		g.rows[len(g.rows)-1] = last + text + "$ FM_EVENT_K" + text[len(text)/2:]
		return nil
	}
	g.rows[len(g.rows)-1] = last + text
	return nil
}

func (g *garbledShell) ClearShellLine(context.Context, backends.Endpoint) error {
	g.clears++
	last := g.rows[len(g.rows)-1]
	if i := strings.LastIndex(last, "$ "); i >= 0 && g.typed > 0 {
		g.rows[len(g.rows)-1] = last[:i+2]
	}
	return nil
}

func (g *garbledShell) ShellRows(context.Context, backends.Endpoint) ([]string, error) {
	return append([]string(nil), g.rows...), nil
}

func TestALaunchLineGarbledByALateLineEditorIsTypedAgain(t *testing.T) {
	line := "FM_EVENT_KEY=\"$(cat '/h/state/t1.event-key')\" opencode --prompt 'Read the brief.'"
	l := Launcher{}
	l.Tunables.Spawn.PathWait = 50 * time.Millisecond
	l.Tunables.Control.Poll = 5 * time.Millisecond
	g := &garbledShell{rows: []string{"$ old", ""}, garbles: 1}
	prompt, err := l.typeClean(context.Background(), g, g, backends.Endpoint{Target: "s:fm-t1"}, line)
	if err != nil {
		t.Fatalf("the second attempt was not made or not proved: %v (rows %q)", err, g.rows)
	}
	if g.typed != 2 || !strings.HasSuffix(prompt, "$") {
		t.Fatalf("typed %d times, prompt %q; want a second, clean line after the garbled one", g.typed, prompt)
	}

	// A shell that garbles every line is refused before any Enter, with
	// the line cleared, after the attempts.
	g = &garbledShell{rows: []string{"$ old", ""}, garbles: typeAttempts}
	if _, err := l.typeClean(context.Background(), g, g, backends.Endpoint{Target: "s:fm-t1"}, line); !errors.Is(err, errNotTheLine) {
		t.Fatalf("a shell that garbles every line: %v", err)
	}
	if g.typed != typeAttempts {
		t.Fatalf("typed %d times, want %d", g.typed, typeAttempts)
	}
}

// lateShell is a pane shell that came back from an agent which left its
// screen behind (killed, or slow to restore the terminal under load): the
// shell draws its prompt only as the first launch line arrives, so the
// read before that line shows the old screen, not the prompt.
type lateShell struct {
	backends.Backend
	rows  []string
	typed int
}

func (g *lateShell) SendText(_ context.Context, _ backends.Endpoint, text string) error {
	g.typed++
	last := len(g.rows) - 1
	if g.typed == 1 {
		g.rows[last] = "bash-5.2# "
	}
	g.rows[last] += text
	return nil
}

func (g *lateShell) ClearShellLine(context.Context, backends.Endpoint) error {
	if g.typed > 0 {
		g.rows[len(g.rows)-1] = "bash-5.2# "
	}
	return nil
}

func (g *lateShell) ShellRows(context.Context, backends.Endpoint) ([]string, error) {
	return append([]string(nil), g.rows...), nil
}

// A prompt drawn after the read before the launch line (as an opencode
// relaunch met in the tier, "bash-5.2#" over the old agent's screen) is
// typed on again once the prompt is on screen; text glued after a prompt
// that was there is still refused at once.
func TestAPromptDrawnAfterTheLineBeganIsTypedOnAgain(t *testing.T) {
	line := "FM_EVENT_KEY=\"$(cat '/h/state/t1.event-key')\" opencode --prompt 'Read the brief.'"
	l := Launcher{}
	l.Tunables.Spawn.PathWait = 50 * time.Millisecond
	l.Tunables.Control.Poll = 5 * time.Millisecond
	g := &lateShell{rows: []string{"┃  fmctl stub model: done.", "┃"}}
	prompt, err := l.typeClean(context.Background(), g, g, backends.Endpoint{Target: "s:fm-t1"}, line)
	if err != nil || g.typed != 2 || prompt != "bash-5.2#" {
		t.Fatalf("typed %d times, prompt %q, err %v; want a second line on the drawn prompt", g.typed, prompt, err)
	}
	if promptBegun([]string{"bash-5.2# "}, "bash-5.2# ls", 1) != true || promptBegun([]string{"┃", ""}, "bash-5.2#", 2) {
		t.Error("promptBegun takes a drawn prompt for none, or a blank or foreign row for a prompt")
	}
}

// drawnComposer is an opencode that has drawn its composer (a real
// capture) and never draws its launch turn.
type drawnComposer struct {
	aliveBackend
	lines []string
}

func (b *drawnComposer) Capture(context.Context, backends.Endpoint) (backends.Screen, error) {
	return backends.Screen{Lines: b.lines}, nil
}

// opencode draws its composer before it takes a prompt, so its launch is
// ready once its launch turn shows: on the screen, or in the report of
// its own hooks, which comes first (the screen's mark follows the record).
// An incarnation of another generation, or none reported, is not ready.
func TestLaunchIsReadyOnTheAgentsOwnReportOfItsLaunchTurn(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "captures", "opencode-1.18.33", "composer-empty.txt"))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := harness.Lookup("opencode")
	sig, _ := h.Screen()
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if st := sig.ReadScreen(lines); !st.Ready() || st.Launched(sig) {
		t.Fatal("the capture does not read as a drawn composer before the launch turn; the test proves nothing")
	}
	dir := t.TempDir()
	store := state.Store{Dir: dir}
	inc := Incarnation{Gen: "g2", eventKey: "k", wire: wired{task: wiring.Task{ID: "t1", StateDir: dir}}}
	l := Launcher{Tunables: config.Tunables{Control: config.ControlVars{Poll: 10 * time.Millisecond}}}
	for _, c := range []struct {
		name   string
		report *state.AgentState
		want   string
	}{
		{"reported", &state.AgentState{State: state.ActivityBusy, Gen: "g2", Event: "prompt-submitted", At: time.Now(), Turn: time.Now(), Harness: "opencode"}, "confirmed"},
		{"another generation", &state.AgentState{State: state.ActivityBusy, Gen: "g1", Event: "prompt-submitted", At: time.Now(), Turn: time.Now(), Harness: "opencode"}, "starting"},
		{"only started", &state.AgentState{State: state.ActivityReady, Gen: "g2", Event: "session-start", At: time.Now(), Harness: "opencode"}, "starting"},
		{"none", nil, "starting"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_ = os.Remove(store.AgentStatePath("t1"))
			if c.report != nil {
				if err := os.WriteFile(store.AgentStatePath("t1"), c.report.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			w := launchWatch{be: &drawnComposer{lines: lines}, reported: inc.launchTurnReported}
			got, err := l.waitScreen(context.Background(), w, h, time.Now().Add(200*time.Millisecond))
			if err != nil || got.Ready != c.want {
				t.Fatalf("ready=%s (err %v), want %s", got.Ready, err, c.want)
			}
		})
	}
}
