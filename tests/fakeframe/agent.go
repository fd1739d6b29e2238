package fakeframe

import (
	"path"
	"regexp"
	"strings"
	"unicode"

	"fmctl/harness"
)

// The agent emulation every fake multiplexer shares: which foreground
// program is an agent, which line a shell runs as a launch, which line makes
// an agent exit. The agents are read from the capability table, so a new
// harness is emulated by every fake as soon as it has a row.

// IsAgent reports whether cmd, a pane's foreground program, is an emulated
// agent: the launch binary of a harness that runs under its own name. A
// harness that runs as an interpreter's script (gemini under node) has no
// process of its name to emulate.
func IsAgent(cmd string) bool {
	h, ok := launchedBy(cmd)
	return ok && h.ArgvScript == ""
}

// launchedBy is the harness whose launch binary cmd is.
func launchedBy(cmd string) (harness.Harness, bool) {
	for _, h := range harness.Harnesses() {
		if cmd != "" && h.Launch.Binary == cmd {
			return h, true
		}
	}
	return harness.Harness{}, false
}

// IsShell reports whether cmd is a shell, which runs what is submitted to it.
func IsShell(cmd string) bool {
	switch cmd {
	case "bash", "zsh", "sh", "dash", "ash", "ksh", "mksh", "fish", "tcsh", "csh":
		return true
	}
	return false
}

// IsExitCommand reports whether a line submitted to an agent is an exit
// command of the table, which ends the emulated agent.
func IsExitCommand(line string) bool {
	line = strings.TrimSpace(line)
	for _, h := range harness.Harnesses() {
		if h.ExitCommand == line {
			return true
		}
	}
	return false
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// Command splits a line submitted to a shell into the program it runs and
// that program's arguments, past leading NAME=value words and `env`'s
// -u NAME, -uNAME and NAME=value options; "" when it runs nothing.
func Command(line string) (name string, args []string) {
	words := ShellWords(line)
	i := 0
	for i < len(words) && assignment.MatchString(words[i]) {
		i++
	}
	if i < len(words) && words[i] == "env" {
		i++
	options:
		for i < len(words) {
			switch w := words[i]; {
			case w == "-u" && i+1 < len(words):
				i += 2
			case strings.HasPrefix(w, "-u") && len(w) > 2, assignment.MatchString(w):
				i++
			default:
				break options
			}
		}
	}
	if i >= len(words) {
		return "", nil
	}
	return words[i], words[i+1:]
}

// LaunchedAgent names the agent a shell line launches, if it launches one.
func LaunchedAgent(line string) (string, bool) {
	name, _ := Command(line)
	name = path.Base(name)
	return name, IsAgent(name)
}

// LaunchedBinary is LaunchedAgent for a multiplexer that names a script's
// process by the script (herdr's process-info shows gemini as node …/gemini):
// any harness's launch binary counts.
func LaunchedBinary(line string) (string, bool) {
	name, _ := Command(line)
	name = path.Base(name)
	return name, IsLaunchBinary(name)
}

// IsLaunchBinary reports whether cmd is any harness's launch binary.
func IsLaunchBinary(cmd string) bool {
	_, ok := launchedBy(cmd)
	return ok
}

// ShellWords splits a line the way a shell would for simple input: blanks
// separate words, quotes and backslashes protect them.
func ShellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			if r == '"' {
				quote = 0
			} else if r == '\\' && i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// RunsAsScript reports whether cmd is the launch binary of a harness that
// runs as an interpreter's script (gemini under node), whose process a
// multiplexer names by the interpreter.
func RunsAsScript(cmd string) bool {
	h, ok := launchedBy(cmd)
	return ok && h.ArgvScript != ""
}
