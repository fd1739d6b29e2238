package zellijfake

import (
	"fmctl/tests/fakeframe"
	"os"
	"path/filepath"
	"strings"
)

// The agent emulation is the same contract the project's fake tmux follows,
// so a testscript suite reads alike on either backend.

// Control files under FAKE_ZELLIJ_DIR that change how the emulated agent reacts.
const (
	neverDiesFile      = "never-dies"      // /exit and /quit leave the agent running
	interruptStopsFile = "interrupt-stops" // Esc or Ctrl c ends the agent
	stuckFile          = "stuck"           // Enter leaves the composer untouched
)

func (p *pane) typeText(text string) { p.Composer += text }

// submit is Enter: the composer line is taken and acted on.
func (p *pane) submit(dir string) {
	if flagFile(dir, stuckFile) {
		return
	}
	line := p.Composer
	p.Composer = ""
	if fakeframe.IsShell(p.Command) {
		p.Transcript = append(p.Transcript, "$ "+line)
		p.runShellLine(line)
		return
	}
	p.Transcript = append(p.Transcript, "["+p.Command+"] "+line)
	if fakeframe.IsExitCommand(line) && !flagFile(dir, neverDiesFile) {
		p.Command = "bash"
		return
	}
	fakeframe.RecordPrompt(p.Command, os.Getenv("HOME"), p.Cwd, line)
}

// runShellLine applies the two shell effects tests rely on: launching an
// agent (behind env assignments and `env -u NAME`), and `cd DIR`.
func (p *pane) runShellLine(line string) {
	if name, ok := fakeframe.LaunchedAgent(line); ok {
		p.Command = name
		return
	}
	if cmd, args := fakeframe.Command(line); cmd == "cd" && len(args) > 0 {
		dir := args[0]
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(p.Cwd, dir)
		}
		p.Cwd = filepath.Clean(dir)
	}
}

// pressKey applies one parsed key. Only Enter, Esc, Ctrl c and Ctrl u have an
// effect; every other valid key is accepted and logged.
func (p *pane) pressKey(dir string, k key) {
	switch {
	case k.is("enter"):
		p.submit(dir)
	case k.is("esc"), k.is("ctrl", "c"):
		if fakeframe.IsAgent(p.Command) && flagFile(dir, interruptStopsFile) {
			p.Command = "bash"
		}
	case k.is("ctrl", "u"):
		p.Composer = ""
	}
}

// screen is what dump-screen prints: the transcript, then the composer line.
// Without --full only a viewport's worth of the transcript is shown.
func (p *pane) screen(full bool) string {
	lines := p.Transcript
	if !full && len(lines) > viewportRows-1 {
		lines = lines[len(lines)-(viewportRows-1):]
	}
	prefix, placeholder, above, below := fakeframe.Frame(p.Command, p.Composer == "")
	out := append(append([]string(nil), lines...), above...)
	out = append(out, prefix+p.Composer+placeholder)
	out = append(out, below...)
	return strings.Join(out, "\n")
}

const (
	viewportRows    = 24
	viewportColumns = 80
)
