package zellijfake

import (
	"fmctl/tests/fakeframe"
	"path"
	"path/filepath"
	"strings"
)

// The agent emulation is the same contract the project's fake tmux follows,
// so a testscript suite reads alike on either backend.

var agentNames = map[string]bool{
	"claude": true, "codex": true, "opencode": true, "pi": true, "pi-signed": true,
	"grok": true, "kimi": true, "cursor-agent": true, "agy": true, "muse": true,
}

var shellNames = map[string]bool{
	"bash": true, "zsh": true, "sh": true, "dash": true, "ash": true,
	"ksh": true, "mksh": true, "fish": true, "tcsh": true, "csh": true,
}

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
	if shellNames[p.Command] {
		p.Transcript = append(p.Transcript, "$ "+line)
		p.runShellLine(line)
		return
	}
	p.Transcript = append(p.Transcript, "["+p.Command+"] "+line)
	switch strings.TrimSpace(line) {
	case "/exit", "/quit":
		if !flagFile(dir, neverDiesFile) {
			p.Command = "bash"
		}
	}
}

// runShellLine applies the two shell effects tests rely on: launching an
// agent (behind env assignments and `env -u NAME`), and `cd DIR`.
func (p *pane) runShellLine(line string) {
	words := strings.Fields(line)
	words = skipAssignments(words)
	if len(words) > 0 && words[0] == "env" {
		words = words[1:]
	options:
		for len(words) > 0 {
			switch {
			case words[0] == "-u" && len(words) > 1:
				words = words[2:]
			case strings.HasPrefix(words[0], "-u") && len(words[0]) > 2:
				words = words[1:]
			case isAssignment(words[0]):
				words = words[1:]
			default:
				break options
			}
		}
	}
	if len(words) == 0 {
		return
	}
	if name := path.Base(words[0]); agentNames[name] {
		p.Command = name
		return
	}
	if words[0] == "cd" && len(words) > 1 {
		dir := words[1]
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(p.Cwd, dir)
		}
		p.Cwd = filepath.Clean(dir)
	}
}

func skipAssignments(words []string) []string {
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	return words
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// pressKey applies one parsed key. Only Enter, Esc, Ctrl c and Ctrl u have an
// effect; every other valid key is accepted and logged.
func (p *pane) pressKey(dir string, k key) {
	switch {
	case k.is("enter"):
		p.submit(dir)
	case k.is("esc"), k.is("ctrl", "c"):
		if agentNames[p.Command] && flagFile(dir, interruptStopsFile) {
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
