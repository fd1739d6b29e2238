package realtmux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A real relaunch: a fake claude is stopped with its exit command and a fake
// codex is launched in the same window and worktree, through the codex
// launch line from the capability table (its binary pinned by config/fm.toml).
func TestRelaunchClaudeOntoCodexInTheSameWindowAndWorktree(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	brief := a.relaunchable("Implement the parser.\n")
	codex := filepath.Join(binDir, "codex")
	conf := "[harness.codex]\nbinary = \"" + codex + "\"\n"
	if err := os.WriteFile(filepath.Join(s.home, "config", "fm.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	paneBefore := s.format(a.window, "#{pane_id}")
	trace := s.traceFile("relaunch")
	r := s.run("", []string{"FM_RUNNER_TRACE=" + trace, "FM_CONTROL_EXIT_WAIT=10", "FM_CONTROL_LAUNCH_WAIT=15"},
		"fm-control", "relaunch", "t1", "--harness", "codex", "--model", "gpt-5", "--note", "the lexer is done; next the parser")
	wantCode(t, r, 0, "fm-control relaunch t1 --harness codex")
	want := "relaunched t1 harness=codex from=claude model=gpt-5 effort=default backend=tmux endpoint=" + a.window +
		" worktree=" + a.wt + " ready=confirmed phase=complete\n"
	if r.stdout != want {
		t.Fatalf("stdout = %q\nwant     %q", r.stdout, want)
	}

	// The old agent got exactly its exit command and quit.
	a.assertBytes("/exit\r")
	// The same window and pane now run codex, in the worktree.
	if got := s.format(a.window, "#{pane_id}"); got != paneBefore {
		t.Fatalf("pane id changed from %s to %s: the relaunch created a new endpoint", paneBefore, got)
	}
	if got := s.format(a.window, "#{pane_current_command}"); got != "codex" {
		t.Fatalf("pane runs %q, want codex", got)
	}
	if got := s.format(a.window, "#{pane_current_path}"); got != a.wt {
		t.Fatalf("pane is in %q, want the worktree %q", got, a.wt)
	}
	// The codex launch line was typed into that pane.
	_, _, lines := traceCounts(t, trace)
	typed := ""
	for _, l := range lines {
		if strings.Contains(l, `"send-keys" "-t" "`+paneBefore+`" "-l" "--"`) && strings.Contains(l, "codex") {
			typed = l
		}
	}
	if typed == "" {
		// codex's launch line carries its hook wiring and is longer than
		// send-keys takes, so it goes as a bracketed paste; the pane's
		// joined screen then shows what was typed.
		for _, l := range lines {
			if strings.Contains(l, `"paste-buffer" "-p"`) && strings.Contains(l, `"-t" "`+paneBefore+`"`) {
				typed = strings.ReplaceAll(s.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", paneBefore), "\n", "")
			}
		}
	}
	if typed == "" {
		t.Fatalf("no codex launch line was typed into %s; trace:\n%s", paneBefore, strings.Join(lines, "\n"))
	}
	for _, part := range []string{codex, "--dangerously-bypass-approvals-and-sandbox", "-m 'gpt-5'", "Read the brief at " + brief} {
		if !strings.Contains(typed, part) {
			t.Errorf("launch line lacks %q: %s", part, typed)
		}
	}
	// The record names the harness that runs; the brief carries the note.
	meta := readFile(filepath.Join(s.home, "state", "t1.meta"))
	for _, line := range []string{"harness=codex", "model=gpt-5", "window=" + a.window, "worktree=" + a.wt} {
		if !strings.Contains(meta, line+"\n") {
			t.Errorf("record lacks %s:\n%s", line, meta)
		}
	}
	if b := readFile(brief); !strings.HasPrefix(b, "Implement the parser.\n") || !strings.Contains(b, "the lexer is done; next the parser") {
		t.Errorf("brief = %q, want the original text plus the note", b)
	}
}

// relaunchable makes the task's worktree a git repository and writes its
// brief, which a relaunch requires; it returns the brief's path.
func (a *agent) relaunchable(brief string) string {
	a.s.t.Helper()
	if out, err := exec.Command("git", "init", "-q", a.wt).CombinedOutput(); err != nil {
		a.s.t.Fatalf("git init: %v %s", err, out)
	}
	path := filepath.Join(a.s.home, "data", a.id, "brief.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		a.s.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(brief), 0o644); err != nil {
		a.s.t.Fatal(err)
	}
	return path
}
