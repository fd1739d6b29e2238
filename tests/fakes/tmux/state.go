// Package tmuxfake is a fake tmux for testscript suites: it implements the
// subset of tmux's command surface fmctl uses, with tmux's own argument
// syntax (command sequences split on ';', exact targets, -F formats), keeps
// its state in files under $FAKE_TMUX_DIR, and emulates a shell and an agent
// in every pane so verbs have something to act on.
package tmuxfake

import (
	"encoding/json"
	"fmctl/tests/fakeframe"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Pane is one window's single pane.
type Pane struct {
	Window     string   `json:"window"`
	WindowID   string   `json:"window_id"`
	ID         string   `json:"id"`
	Command    string   `json:"command"`
	Cwd        string   `json:"cwd"`
	Composer   string   `json:"composer"`
	Transcript []string `json:"transcript"`
	// Running: the shell took a line it has not finished (nor started
	// anything for), so it draws no prompt.
	Running bool `json:"running,omitempty"`
	// Queued: texts the agent took into its queue instead of running
	// them; it runs them at its next submit.
	Queued []string `json:"queued,omitempty"`
}

// Session holds windows in creation order.
type Session struct {
	Name  string  `json:"name"`
	Panes []*Pane `json:"panes"`
}

// World is the whole fake server.
type World struct {
	Running    bool              `json:"running"`
	Sessions   []*Session        `json:"sessions"`
	NextPane   int               `json:"next_pane"`
	NextWindow int               `json:"next_window"`
	Buffers    map[string]string `json:"buffers"`
}

func dir() string {
	d := os.Getenv("FAKE_TMUX_DIR")
	if d == "" {
		d = "."
	}
	return d
}

func path(name string) string { return filepath.Join(dir(), name) }

// flag reports whether the test switched a behaviour on with a flag file.
func flag(name string) bool {
	_, err := os.Stat(path(name))
	return err == nil
}

// withWorld loads the world under an exclusive lock, runs fn, and saves it.
func withWorld(fn func(w *World) error) error {
	if err := os.MkdirAll(dir(), 0o755); err != nil {
		return err
	}
	lf, err := os.OpenFile(path(".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	w := &World{Buffers: map[string]string{}}
	if data, err := os.ReadFile(path("world.json")); err == nil {
		if err := json.Unmarshal(data, w); err != nil {
			return fmt.Errorf("fake tmux world is corrupt: %w", err)
		}
	}
	if w.Buffers == nil {
		w.Buffers = map[string]string{}
	}
	ferr := fn(w)
	data, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return err
	}
	tmp := path("world.json.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path("world.json")); err != nil {
		return err
	}
	return ferr
}

func (w *World) session(name string) *Session {
	for _, s := range w.Sessions {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (w *World) paneByID(id string) (*Session, *Pane) {
	for _, s := range w.Sessions {
		for _, p := range s.Panes {
			if p.ID == id {
				return s, p
			}
		}
	}
	return nil, nil
}

func (w *World) addPane(s *Session, window, cwd string) *Pane {
	p := &Pane{Window: window, WindowID: fmt.Sprintf("@%d", w.NextWindow), ID: fmt.Sprintf("%%%d", w.NextPane), Command: "bash", Cwd: cwd}
	w.NextPane++
	w.NextWindow++
	s.Panes = append(s.Panes, p)
	return p
}

func appendLine(name, line string) {
	f, err := os.OpenFile(path(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(line + "\n")
}

func logInput(p *Pane, s *Session, kind, value string) {
	appendLine("input.log", fmt.Sprintf("%s:%s %s %s", s.Name, p.Window, kind, value))
}

func isShell(cmd string) bool { return fakeframe.IsShell(cmd) }

// submit emulates Enter: a shell runs the line, an agent reads it.
func submit(p *Pane) {
	if flag("stuck") {
		return
	}
	line := p.Composer
	p.Composer = ""
	p.Transcript = append(p.Transcript, "you: "+strings.ReplaceAll(line, "\n", "⏎"))
	// submit-screen: what the agent draws once it takes the line (claude's
	// help dialog for /help) replaces every capture from now on.
	if screen, err := os.ReadFile(path("submit-screen")); err == nil {
		os.WriteFile(path("pane"), screen, 0o644)
		os.Remove(path("submit-screen"))
	}
	if isShell(p.Command) {
		runShellLine(p, line)
		return
	}
	if queuesExit(p.Queued) {
		// The next submit runs the queue, and the exit command in it.
		p.Queued, p.Command = nil, "bash"
		return
	}
	if fakeframe.IsExitCommand(line) && !flag("never-dies") {
		// queues-exit: the agent takes one exit command into its queue
		// and leaves it there until its next submit (copilot 1.0.102 after
		// a cancelled turn: tests/captures/notes-copilot.md).
		if flag("queues-exit") {
			os.Remove(path("queues-exit"))
			p.Queued = append(p.Queued, line)
			return
		}
		p.Command = "bash"
		return
	}
	// unrecorded: the agent took the line but its record does not show it
	// yet; `faketmux record` writes it there later.
	if !flag("unrecorded") {
		recorded := line
		// joined: the agent submits the line joined to the texts it had
		// queued (the file holds them), as one message.
		if queued, err := os.ReadFile(path("joined")); err == nil {
			recorded = strings.TrimRight(string(queued), "\n") + "\n\n" + line
		}
		fakeframe.RecordPrompt(p.Command, os.Getenv("HOME"), p.Cwd, recorded)
		if !strings.HasPrefix(strings.TrimSpace(line), "/") {
			fakeframe.HangTurn(dir(), p.Command, os.Getenv("HOME"), p.Cwd)
		}
	}
}

func queuesExit(queued []string) bool {
	for _, q := range queued {
		if fakeframe.IsExitCommand(q) {
			return true
		}
	}
	return false
}

func runShellLine(p *Pane, line string) {
	cmd, args := fakeframe.Command(line)
	name, agent := fakeframe.LaunchedAgent(line)
	switch {
	case cmd == "cd" && len(args) > 0:
		p.Cwd = args[0]
	case agent:
		// launch-slow: the shell has not run the line yet; launch-fails:
		// it could not find the binary and is back at its prompt.
		if flag("launch-slow") {
			p.Running = true
			return
		}
		if flag("launch-fails") {
			p.Transcript = append(p.Transcript, notFound(line))
			return
		}
		p.Command = name
		if content, err := os.ReadFile(path("launch-becomes")); err == nil {
			p.Command = strings.TrimSpace(string(content))
		}
		appendLine("launch.log", fmt.Sprintf("%s %s", p.Window, line))
		// The screen the launched agent draws (a dialog, a half-drawn TUI)
		// replaces every capture from now on.
		if screen, err := os.ReadFile(path("launch-screen")); err == nil {
			os.WriteFile(path("pane"), screen, 0o644)
		}
	}
}

// notFound is bash's complaint about a launch line's missing program.
func notFound(line string) string {
	cmd, _ := fakeframe.Command(line)
	if strings.Contains(cmd, "/") {
		return "bash: " + cmd + ": No such file or directory"
	}
	return "bash: " + cmd + ": command not found"
}

// interrupt emulates an agent receiving its cancel key.
func interrupt(p *Pane) {
	if isShell(p.Command) {
		return
	}
	if log, err := os.ReadFile(path("muse-log")); err == nil {
		f, err := os.OpenFile(strings.TrimSpace(string(log)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err == nil {
			f.WriteString(`{"type":"run_finished","run_id":"run-1","terminal":"cancelled"}` + "\n")
			f.Close()
		}
	}
	fakeframe.InterruptTurn(dir(), p.Command, os.Getenv("HOME"), p.Cwd)
	// restores: the agent puts the prompt of the cancelled turn back into
	// its composer, as claude and pi do.
	if flag("restores") && p.Composer == "" && len(p.Transcript) > 0 {
		p.Composer = strings.ReplaceAll(strings.TrimPrefix(p.Transcript[len(p.Transcript)-1], "you: "), "⏎", "\n")
	}
	if flag("interrupt-stops") {
		p.Command = "bash"
	}
}

// screen renders a pane the way an agent TUI would: a header, the transcript,
// and the composer on the cursor row. claude, codex and opencode draw their
// composer the way the real CLI does (harness/screens.go reads it), so a
// launch reads as ready and held text as held.
func screen(p *Pane) (lines []string, cursorY int) {
	lines = append(lines, p.Command+" fake pane")
	t := p.Transcript
	if len(t) > 20 {
		t = t[len(t)-20:]
	}
	lines = append(lines, t...)
	if flag("busy-footer") {
		lines = append(lines, "esc to interrupt")
	}
	if p.Running && isShell(p.Command) {
		return append(lines, ""), len(lines)
	}
	if len(p.Queued) > 0 {
		// copilot's queue rows, above its composer's frame.
		lines = append(lines, fmt.Sprintf("Queued (%d)", len(p.Queued)))
		for _, q := range p.Queued {
			lines = append(lines, " └ "+q)
		}
	}
	composer := strings.ReplaceAll(p.Composer, "\n", "⏎")
	prefix, placeholder, above, below := fakeframe.Frame(p.Command, composer == "")
	lines = append(lines, above...)
	cursorY = len(lines)
	lines = append(lines, prefix+composer+placeholder)
	return append(lines, below...), cursorY
}
