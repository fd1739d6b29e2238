package herdrfake

import (
	"fmctl/tests/fakeframe"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
	// viewportRows is the fake's screen height: `pane read --source visible`
	// returns at most this many rows.
	viewportRows = 24
	// transcriptCap bounds how much scrollback the state file keeps.
	transcriptCap = 1000
)

// isAgent: herdr names a script's process by the script, so gemini counts.
func (p *Pane) isAgent() bool { return fakeframe.IsLaunchBinary(p.Command) }

// flag reports whether a behaviour switch file exists in $FAKE_HERDR_DIR.
func (f *fake) flag(name string) bool {
	_, err := os.Stat(filepath.Join(f.dir, name))
	return err == nil
}

func (p *Pane) say(line string) {
	p.Transcript = append(p.Transcript, line)
	if n := len(p.Transcript); n > transcriptCap {
		p.Transcript = append([]string(nil), p.Transcript[n-transcriptCap:]...)
	}
}

// typeText feeds bytes as a terminal would deliver them. A bracketed paste
// lands in the composer verbatim; outside one, CR submits, and LF submits in
// a shell (readline's accept-line) but is a literal newline in an agent's
// composer (Ctrl+J), which is how a raw multi-line send goes wrong.
func (f *fake) typeText(p *Pane, text string) {
	p.Stale = ""
	for len(text) > 0 {
		if strings.HasPrefix(text, pasteStart) {
			rest := text[len(pasteStart):]
			body := rest
			text = ""
			if i := strings.Index(rest, pasteEnd); i >= 0 {
				body, text = rest[:i], rest[i+len(pasteEnd):]
			}
			p.Composer += strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
			continue
		}
		r, size := utf8.DecodeRuneInString(text)
		text = text[size:]
		switch {
		case r == '\r', r == '\n' && !p.isAgent():
			f.submit(p)
		default:
			p.Composer += string(r)
		}
	}
	p.Revision++
}

// pressKey applies one parsed key.
func (f *fake) pressKey(p *Pane, k keyCombo) {
	if k.code != "enter" {
		p.Stale = "" // any other key makes the TUI redraw
	}
	switch {
	case k.code == "enter" && !k.ctrl && !k.alt:
		f.submit(p)
	case k.code == "esc":
		f.interrupt(p)
	case k.ctrl && k.code == "c":
		p.Composer = ""
		f.interrupt(p)
	case k.ctrl && k.code == "u":
		p.Composer = ""
	case k.ctrl && k.code == "z":
		f.suspend(p)
	case k.code == "backspace":
		if _, size := utf8.DecodeLastRuneInString(p.Composer); size > 0 {
			p.Composer = p.Composer[:len(p.Composer)-size]
		}
	case len(k.code) > 0 && !k.ctrl && !k.alt && !k.super && utf8.RuneCountInString(k.code) == 1:
		r, _ := utf8.DecodeRuneInString(k.code)
		if k.shift {
			r = unicode.ToUpper(r)
		}
		p.Composer += string(r)
	}
	p.Revision++
}

// interrupt is Escape or Ctrl+C: an agent stops only when the test asked for
// an interrupt that ends it.
func (f *fake) interrupt(p *Pane) {
	p.Working = false
	if p.isAgent() && f.flag("interrupt-stops") {
		p.say(p.Command + " interrupted; back to the shell")
		p.Command = "bash"
	}
}

// submit is Enter: the composer line is taken and acted on. With the stuck
// switch the keystroke is swallowed, so a submit never confirms.
func (f *fake) submit(p *Pane) {
	if f.flag("stuck") {
		return
	}
	line := p.Composer
	p.Composer = ""
	if p.isAgent() {
		p.say("you: " + oneLine(line))
		p.Working = f.flag("turns")
		if f.flag("slow-redraw") && line != "" {
			p.Stale = line
		}
		if fakeframe.IsExitCommand(line) && !f.flag("never-dies") {
			p.say(p.Command + " exited")
			p.Command = "bash"
			return
		}
		fakeframe.RecordPrompt(p.Command, os.Getenv("HOME"), p.ForegroundCwd, line)
		return
	}
	p.say("$ " + oneLine(line))
	f.shellLine(p, line)
}

// shellLine runs a submitted shell line: `cd DIR`, or the launch of an agent
// (fakeframe.Command skips NAME=value words and env's options).
func (f *fake) shellLine(p *Pane, line string) {
	cmd, args := fakeframe.Command(line)
	if cmd == "cd" {
		f.cd(p, args)
		return
	}
	if cmd == "fg" && p.Stopped != "" {
		p.Command, p.Stopped = p.Stopped, ""
		return
	}
	if name, ok := fakeframe.LaunchedBinary(line); ok {
		p.Command = name
		p.say(name + " fake agent")
	}
}

func (f *fake) cd(p *Pane, args []string) {
	dir := f.env("HOME")
	if len(args) > 0 {
		dir = args[0]
	}
	if dir == "" {
		return
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.ForegroundCwd, dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		p.say("bash: cd: " + dir + ": No such file or directory")
		return
	}
	p.ForegroundCwd = filepath.Clean(dir)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "⏎") }

// screen is the pane's rows: transcript, then the composer in its harness's
// frame (tests/fakeframe). Trailing blanks are trimmed, as a terminal text
// read does.
func (p *Pane) screen() []string {
	shown := p.Composer
	if shown == "" && p.isAgent() {
		shown = p.Stale
	}
	prefix, placeholder, above, below := fakeframe.Frame(p.Command, shown == "")
	rows := append(append([]string(nil), p.Transcript...), above...)
	rows = append(rows, prefix+oneLine(shown)+placeholder)
	rows = append(rows, below...)
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	return rows
}

// keyCombo is one parsed herdr key-combo string.
type keyCombo struct {
	code                    string // "enter", "esc", "tab", "f1", or the character itself
	ctrl, alt, shift, super bool
}

var keyNames = map[string]string{
	"space": " ", "enter": "enter", "return": "enter", "esc": "esc", "escape": "esc",
	"tab": "tab", "backspace": "backspace", "bs": "backspace",
	"left": "left", "right": "right", "up": "up", "down": "down",
	"minus": "-", "comma": ",", "period": ".", "slash": "/", "backslash": `\`,
	"quote": "'", "double_quote": `"`, "double-quote": `"`, "semicolon": ";",
	"colon": ":", "percent": "%", "ampersand": "&", "backtick": "`", "plus": "+",
}

// parseKey follows herdr's key-combo grammar (config/keybinds.rs
// parse_key_combo, plus the API's C-c and "+" aliases): '+'-joined modifier
// tokens and exactly one key, case-insensitive.
func parseKey(s string) (keyCombo, bool) {
	switch strings.TrimSpace(s) {
	case "C-c", "c-c":
		s = "ctrl+c"
	case "+":
		s = "plus"
	}
	var k keyCombo
	key := ""
	for _, part := range strings.Split(s, "+") {
		part = strings.TrimSpace(part)
		if part == "" {
			return k, false
		}
		switch strings.ToLower(part) {
		case "ctrl", "control":
			k.ctrl = true
		case "shift":
			k.shift = true
		case "alt", "option", "meta":
			k.alt = true
		case "cmd", "command", "super", "hyper":
			k.super = true
		default:
			if key != "" {
				return k, false
			}
			key = part
		}
	}
	if key == "" {
		return k, false
	}
	lower := strings.ToLower(key)
	if name, ok := keyNames[lower]; ok {
		k.code = name
		return k, true
	}
	if utf8.RuneCountInString(key) == 1 {
		r, _ := utf8.DecodeRuneInString(key)
		if unicode.IsUpper(r) {
			k.shift, r = true, unicode.ToLower(r)
		}
		k.code = string(r)
		return k, true
	}
	if strings.HasPrefix(lower, "f") && len(lower) > 1 {
		n := 0
		for _, c := range lower[1:] {
			if c < '0' || c > '9' {
				return k, false
			}
			n = n*10 + int(c-'0')
			if n > 255 {
				return k, false
			}
		}
		k.code = lower
		return k, true
	}
	return k, false
}
