package launch

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/termtext"
	"fmctl/harness"
	"fmctl/phrase"
)

// LaunchFailed is a launch line that ended without leaving its agent
// running: the endpoint's shell is in the foreground again, and its screen
// proves the line ran and ended (the shell could not find the binary, or
// drew its prompt again below the line). Waiting longer cannot bring the
// agent up, so the launch wait stops at once.
type LaunchFailed struct {
	Binary  string   // the program the launch line ran
	Missing bool     // the shell said the binary is missing, not only that the line ended
	Said    []string // the last rows the pane showed after the launch line
	// Found is where the caller's PATH finds a program of Binary's name
	// ("" where it finds none), and Pins the config/fm.toml that pins it.
	Found, Pins string
}

func (e *LaunchFailed) Error() string {
	why := "its shell came back at once"
	if e.Missing {
		why = fmt.Sprintf("its shell could not run %s", e.Binary)
	}
	if len(e.Said) == 0 {
		return why
	}
	return why + ", saying: " + strings.Join(e.Said, " / ")
}

// missingCommand is how the shells and env(1) fmctl launches through say a
// program cannot be run, lower-cased: bash "claude: command not found", zsh
// "command not found: claude", dash "claude: not found", fish "Unknown
// command: claude", env and bash for a path "No such file or directory",
// zsh "no such file or directory: /x/claude", and a file that is no
// program "Permission denied". A row counts only when it also names the
// binary and comes after the launch line while the shell is in front.
var missingCommand = []string{"not found", "unknown command", "no such file or directory", "permission denied"}

// saidRows is how many of the pane's last rows a launch failure quotes.
const saidRows = 4

// shellBack reads a screen captured while the endpoint's shell was in the
// foreground after the launch line was submitted, and returns the proof
// that the line already ended, or nil while the shell may still be about
// to run it. prompt is what preceded the launch line on its row ("" when
// the shell had drawn none, then only a complaint about bin proves it).
func shellBack(rows []string, line, prompt, bin string) *LaunchFailed {
	after := rowsAfter(rows, line)
	for len(after) > 0 && strings.TrimSpace(after[len(after)-1]) == "" {
		after = after[:len(after)-1]
	}
	back := len(after) > 0 && isPrompt(strings.TrimSpace(after[len(after)-1]), strings.TrimSpace(prompt))
	if back {
		after = after[:len(after)-1] // the fresh prompt says nothing
	}
	missing := false
	name := strings.ToLower(path.Base(bin))
	for _, r := range after {
		low := strings.ToLower(r)
		if !strings.Contains(low, name) {
			continue
		}
		for _, m := range missingCommand {
			if strings.Contains(low, m) {
				missing = true
			}
		}
	}
	if !back && !missing {
		return nil
	}
	var said []string
	for _, r := range after {
		if t := strings.TrimSpace(phrase.Printable(termtext.Strip(r))); t != "" {
			said = append(said, t)
		}
	}
	return &LaunchFailed{Binary: bin, Missing: missing, Said: said[max(0, len(said)-saidRows):]}
}

// isPrompt reports whether row is the prompt the launch line was typed
// after, drawn again. A new pane's shell may draw its first prompt after
// the launch line's first keys were echoed, which then stand before it in
// the row read as the prompt; the prompt proper is that row's tail.
func isPrompt(row, prompt string) bool {
	if prompt == "" || row == "" {
		return false
	}
	return row == prompt || (len(row) >= 3 && strings.HasSuffix(prompt, row))
}

// rowsAfter returns the rows below the last place the launch line ends,
// joining the rows it wraps over and ignoring blanks (a capture drops the
// trailing space of a row the terminal wrapped at it). A line no longer
// on the screen has scrolled off under what came after it: every row then
// is after it.
func rowsAfter(rows []string, line string) []string {
	want := squash(line)
	if want == "" {
		return rows
	}
	for end := len(rows) - 1; end >= 0; end-- {
		if squash(rows[end]) == "" {
			continue
		}
		joined := ""
		for start := end; start >= 0 && start > end-maxInputRows; start-- {
			joined = squash(rows[start]) + joined
			if strings.HasSuffix(joined, want) {
				return rows[end+1:]
			}
			if !strings.HasSuffix(want, joined) {
				break // the rows up to end are not the line's tail
			}
		}
	}
	return rows
}

func squash(s string) string { return strings.Join(strings.Fields(s), "") }

// Explain adds to a launch refusal what a *LaunchFailed cause tells its
// reader: the code, the pane's last words (a fact under --json) and the
// line of config/fm.toml that points fmctl at the agent's binary, naming
// the one the caller's PATH finds, since the commonest cause is a pane
// whose login shell set another PATH than the caller's (Debian's
// /etc/profile sets it outright; docs/backends/tmux.md). Any other cause
// leaves e as it is.
func Explain(e *fault.Error, cause error, h harness.Harness) *fault.Error {
	var lf *LaunchFailed
	if !errors.As(cause, &lf) {
		return e
	}
	e.Coded(fault.ELaunchFailed).Put(fault.Fact{Key: "pane", Text: strings.Join(lf.Said, " / "), Value: append([]string{}, lf.Said...)})
	pin, name := lf.Found, path.Base(lf.Binary)
	switch {
	case lf.Missing && lf.Found == "":
		if path.IsAbs(lf.Binary) {
			e.Hint("the pane's shell found no %s, and your PATH has no %s: install it, or pin where it is", lf.Binary, name)
		} else {
			e.Hint("neither the pane's shell nor your PATH has %s: install it, or pin where it is", name)
		}
		pin = "/absolute/path/to/" + name
	case lf.Missing && path.IsAbs(lf.Binary):
		e.Hint("the pane's shell cannot run %s, the binary pinned; your PATH has %s", lf.Binary, lf.Found)
	case lf.Missing:
		e.Hint("the pane's shell did not find %s on its PATH, but yours finds %s: a login shell may set PATH anew", lf.Binary, lf.Found)
	case lf.Found != "" && lf.Found != lf.Binary:
		e.Hint("%s ended as soon as it started: read what it printed in the pane; if the pane's shell ran another %s than yours (%s), pin yours", lf.Binary, name, lf.Found)
	default:
		e.Hint("%s ended as soon as it started: read what it printed in the pane", lf.Binary)
		return e
	}
	file := lf.Pins
	if file == "" {
		file = "config/fm.toml"
	}
	return e.Hint("pin it: in %s, under [harness.%s], write binary = %s", file, h.Name, strconv.Quote(pin))
}

// onPath is where a shell with pathVar as its PATH finds the program
// name: the first regular, executable file of that name in an absolute
// directory of it, or "".
func onPath(pathVar, name string) string {
	for _, dir := range filepath.SplitList(pathVar) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}
