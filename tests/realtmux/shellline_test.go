package realtmux

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"fmctl/state"
)

// Text drawn below the row a shell's prompt is on is not the shell's input
// line: a relaunch types its launch line after the prompt and starts the
// agent. In CI, opencode 1.18.33 printed a "TreeSitter client destroyed"
// stack trace as it exited, below the row bash then drew its prompt on,
// and the relaunch read the trace as the line the launch line was typed
// into, refused, and left the task with no agent. The trace is drawn
// twice: right below the prompt, where the launch line, wrapping in the
// narrow pane, then covers it (what CI met), and further down, where it
// stays below the launch line.
func TestTextBelowThePromptIsNotTheShellLine(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	r.tmux("new-session", "-d", "-s", "narrow", "-x", "40", "-y", "40")
	env := []string{"FM_TMUX_SESSION=narrow", r.path}
	res := r.run("", env, "fm-spawn", "t1", "--harness", "claude", "--worktree", r.worktree("t1"))
	wantCode(t, res, 0, "fm-spawn t1")
	pane := r.recordValue("t1", state.KeyTmuxPane)
	screen := func() string { return r.capture(pane) + "\n" + r.panes() }
	for i, blankRows := range []int{1, 30} {
		wantCode(t, r.run("", append(env, "FM_CONTROL_EXIT_WAIT=10"), "fm-control", "exit", "t1"), 0, "exit t1")
		prompt := ""
		waitFor(t, 10*time.Second, "the shell back at its prompt", func() bool {
			rows := strings.Split(r.capture(pane), "\n")
			prompt = rows[len(rows)-1]
			return r.format(pane, "#{pane_current_command}") == "bash" && (strings.HasSuffix(prompt, "$") || strings.HasSuffix(prompt, "#"))
		}, screen)
		// From the top of a cleared screen: blank rows, the trace, and the
		// cursor back up to the top row, where bash draws its prompt.
		trace := strings.Repeat(`\n`, blankRows) + `TreeSitter client destroyed\n    at destroy (tree-sitter.js:1:1)\n`
		r.tmux("send-keys", "-t", pane, "-l", fmt.Sprintf(`clear; printf '%s\033[%dA'`, trace, blankRows+2))
		r.tmux("send-keys", "-t", pane, "Enter")
		waitFor(t, 10*time.Second, "the prompt above the trace", func() bool {
			rows := strings.Split(r.capture(pane), "\n")
			return rows[0] == prompt && r.format(pane, "#{cursor_y} #{cursor_x}") == fmt.Sprintf("0 %d", len(prompt)+1) &&
				len(rows) > blankRows && strings.HasPrefix(rows[blankRows], "TreeSitter client destroyed")
		}, screen)

		res := r.run("", env, "fm-spawn", "t1", "--relaunch")
		wantCode(t, res, 0, fmt.Sprintf("fm-spawn t1 --relaunch, the trace %d rows below the prompt", blankRows))
		if n := r.startsAfter(i + 2); n != i+2 {
			t.Fatalf("%d agents started, want %d", n, i+2)
		}
		if cmd := r.format(pane, "#{pane_current_command}"); cmd != "claude" {
			t.Fatalf("pane runs %q after the relaunch, want claude\n%s", cmd, screen())
		}
	}
}
