package scripts

import (
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// hintCommand is one command a hint line names, as its reader would type it.
type hintCommand struct {
	Hint string   // the hint line it came from, without "hint: "
	Env  []string // NAME=value words written before the binary
	Args []string // the binary, then its words, unquoted
}

func (c hintCommand) String() string {
	return strings.Join(append(append([]string{}, c.Env...), c.Args...), " ")
}

// hintCommands finds every command the hint: lines of an error output name.
// The rule hints are written to: a command starts at the word that is one
// of hintBinaries (a "(" or "`" glued before it is dropped), with any
// NAME=value words just before it as its environment, and runs to the end
// of the line, to the first word that ends in ",", ";", ")" or "`" (which
// is stripped and ends it), or to the first word that starts with "(".
// Its words are split as a POSIX shell splits them, '...' and "..." kept
// whole; the prose around it is not (it holds apostrophes). A placeholder
// is written <word>.
func hintCommands(stderr string) ([]hintCommand, error) {
	var out []hintCommand
	for _, line := range strings.Split(stderr, "\n") {
		hint, ok := strings.CutPrefix(line, "hint: ")
		if !ok {
			continue
		}
		for rest := hint; ; {
			at := commandStart.FindStringSubmatchIndex(rest)
			if at == nil {
				break
			}
			c := hintCommand{Hint: hint}
			// Group 2 is the environment words; the binary starts where
			// they end.
			env, err := shellWords(rest[at[4]:at[5]])
			if err != nil {
				return nil, fmt.Errorf("hint %q: %v", hint, err)
			}
			for _, e := range env {
				c.Env = append(c.Env, unquote(e))
			}
			words, end, err := commandWords(rest[at[5]:])
			if err != nil {
				return nil, fmt.Errorf("hint %q: %v", hint, err)
			}
			for _, w := range words {
				c.Args = append(c.Args, unquote(w))
			}
			out = append(out, c)
			rest = rest[at[5]+end:]
		}
	}
	return out, nil
}

// commandStart finds a binary's name as a word (after the line's start, a
// blank, "(" or "`"), and the NAME=value words just before it.
var commandStart = regexp.MustCompile(`(^|[ (\x60])((?:[A-Z_][A-Z0-9_]*=(?:'[^']*'|"[^"]*"|[^ '"]+) )*)(?:fm-send|fm-control|fm-spawn|fm-teardown)(?: |$)`)

// commandWords reads a command's words from s, which starts at its
// binary, up to where the rule ends it; end is how far it read.
func commandWords(s string) (words []string, end int, err error) {
	for end < len(s) {
		for end < len(s) && s[end] == ' ' {
			end++
		}
		if end == len(s) || (len(words) > 0 && s[end] == '(') {
			break
		}
		w, n, err := shellWord(s[end:])
		if err != nil {
			return nil, 0, err
		}
		end += n
		trimmed := strings.TrimRight(w, ",;)`")
		if trimmed != "" {
			words = append(words, trimmed)
		}
		if trimmed != w {
			break
		}
	}
	return words, end, nil
}

// shellWord reads one word from s up to a blank outside quotes, keeping
// its quotes (so a trailing "," inside quotes is told from one after
// them); n is its length.
func shellWord(s string) (w string, n int, err error) {
	var quote byte
	for n = 0; n < len(s); n++ {
		c := s[n]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				n++
			}
		case c == '\\':
			n++
		case c == '\'' || c == '"':
			quote = c
		case c == ' ':
			return s[:n], n, nil
		}
	}
	if quote != 0 {
		return "", 0, fmt.Errorf("unclosed %c", quote)
	}
	return s[:min(n, len(s))], min(n, len(s)), nil
}

// shellWords splits s into shell words, keeping their quotes.
func shellWords(s string) ([]string, error) {
	var words []string
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		w, n, err := shellWord(s)
		if err != nil {
			return nil, err
		}
		words, s = append(words, w), s[n:]
	}
	return words, nil
}

// unquote removes a shell word's quotes: '...' literal, "..." with \ escapes.
func unquote(w string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote != 0 && c == quote:
			quote = 0
		case quote != '\'' && c == '\\' && i+1 < len(w):
			i++
			b.WriteByte(w[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

var (
	placeholder = regexp.MustCompile(`<([A-Za-z][A-Za-z0-9-]*)>`)
	// A metavariable of a usage line (H, REPO, FILE) in a hint's command
	// would be typed as it stands: a hint writes <harness>, <repo>, <file>.
	metavar = regexp.MustCompile(`^[A-Z]+$`)
)

// fill replaces each <word> placeholder of c with its value from values,
// and refuses a word no reader could type as printed.
func (c hintCommand) fill(values map[string]string) (hintCommand, error) {
	out := hintCommand{Hint: c.Hint, Env: c.Env}
	for _, a := range c.Args {
		if a == "..." || metavar.MatchString(a) {
			return out, fmt.Errorf("hint %q: its command %q holds %q, which is not a command word; write a placeholder as <word>", c.Hint, c, a)
		}
		var missing string
		a = placeholder.ReplaceAllStringFunc(a, func(m string) string {
			name := m[1 : len(m)-1]
			v, ok := values[name]
			if !ok {
				missing = name
			}
			return v
		})
		if missing != "" {
			return out, fmt.Errorf("hint %q: its command %q has the placeholder <%s>: give runhint %s=VALUE", c.Hint, c, missing, missing)
		}
		out.Args = append(out.Args, a)
	}
	return out, nil
}

// runhint [-exit N] [-cmd K] [-file F] [NAME=VALUE...] runs the command a
// hint of the last command's stderr (or of F) names, in the state that
// printed it, with each <NAME> placeholder given its VALUE, and asserts it
// is no usage error (exit 2), or exits N when given. With more than one
// command among the hints, -cmd K picks the K-th (from 1); the script
// restores the state before it runs the next one, so each runs in the
// state that printed it. The command's stdout and stderr are the script's
// stdout and stderr afterwards.
func cmdRunHint(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: runhint [-exit N] [-cmd K] [-file F] [NAME=VALUE...] (no !: a hint's command must never be a usage error)")
	}
	want, pick, file := -1, 0, "stderr"
	values := map[string]string{}
	for len(args) > 0 {
		switch a := args[0]; {
		case (a == "-exit" || a == "-cmd" || a == "-file") && len(args) > 1:
			if a == "-file" {
				file = args[1]
			} else {
				n, err := strconv.Atoi(args[1])
				if err != nil {
					ts.Fatalf("runhint: %s %q is not a number", a, args[1])
				}
				if a == "-exit" {
					want = n
				} else {
					pick = n
				}
			}
			args = args[2:]
			continue
		case strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			values[k] = v
		default:
			ts.Fatalf("usage: runhint [-exit N] [-cmd K] [-file F] [NAME=VALUE...]; %q", a)
		}
		args = args[1:]
	}
	cmds, err := hintCommands(ts.ReadFile(file))
	if err != nil {
		ts.Fatalf("runhint: %v", err)
	}
	switch {
	case len(cmds) == 0:
		ts.Fatalf("runhint: no hint in %s names a command", file)
	case pick == 0 && len(cmds) > 1:
		ts.Fatalf("runhint: the hints name %d commands (%s); pick one with -cmd K", len(cmds), listCommands(cmds))
	case pick == 0:
		pick = 1
	case pick > len(cmds):
		ts.Fatalf("runhint: -cmd %d, but the hints name %d commands (%s)", pick, len(cmds), listCommands(cmds))
	}
	c, err := cmds[pick-1].fill(values)
	if err != nil {
		ts.Fatalf("runhint: %v", err)
	}
	ts.Logf("runhint: %s", c)
	restore := map[string]string{}
	for _, e := range c.Env {
		k, v, _ := strings.Cut(e, "=")
		restore[k] = ts.Getenv(k)
		ts.Setenv(k, v)
	}
	err = ts.Exec(c.Args[0], c.Args[1:]...)
	for k, v := range restore {
		ts.Setenv(k, v)
	}
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("runhint: run %s: %v", c, err)
		}
		got = ee.ExitCode()
	}
	switch {
	case got == 2:
		ts.Fatalf("the hint %q names %q, which fails as a usage error (exit 2):\n%s", c.Hint, c, ts.ReadFile("stderr"))
	case want >= 0 && got != want:
		ts.Fatalf("the hint %q names %q, which exits %d, want %d:\n%s", c.Hint, c, got, want, ts.ReadFile("stderr"))
	}
}

func listCommands(cmds []hintCommand) string {
	var s []string
	for i, c := range cmds {
		s = append(s, fmt.Sprintf("%d: %s", i+1, c))
	}
	return strings.Join(s, "; ")
}

func TestHintCommands(t *testing.T) {
	cases := []struct {
		hint string
		want []string
	}{
		{"hint: start a new agent with fm-spawn t1 --relaunch (or fm-control relaunch t1 --note <note>)",
			[]string{"fm-spawn t1 --relaunch", "fm-control relaunch t1 --note <note>"}},
		{"hint: to start its agent again, use fm-spawn t1 --relaunch, or fm-control relaunch t1", []string{"fm-spawn t1 --relaunch", "fm-control relaunch t1"}},
		{"hint: look at the pane (fm-control read t1) before sending again", []string{"fm-control read t1"}},
		{"hint: FM_HOME='/a b/home' fm-teardown c1", []string{"FM_HOME=/a b/home fm-teardown c1"}},
		{"hint: or create one with fm-spawn t1 --project '/x, y'", []string{"fm-spawn t1 --project /x, y"}},
		{"hint: merge it (git -C '/p' merge fm/t1, on main)", nil},
		{"error: run fm-spawn t1 first", nil},
		{"hint: restore the project at /p (the record's project=)", nil},
		{"hint: or archive the task's worktree: fm-teardown t1 --force", []string{"fm-teardown t1 --force"}},
		{"hint: fm-spawn's brief", nil},
	}
	for _, c := range cases {
		cmds, err := hintCommands(c.hint)
		if err != nil {
			t.Fatalf("%q: %v", c.hint, err)
		}
		var got []string
		for _, cmd := range cmds {
			got = append(got, cmd.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: commands %q, want %q", c.hint, got, c.want)
		}
	}
	if _, err := (hintCommand{Args: []string{"fm-spawn", "t1", "--harness", "H"}}).fill(nil); err == nil {
		t.Errorf("a metavariable H in a hint's command was accepted")
	}
	if _, err := (hintCommand{Args: []string{"fm-spawn", "t1", "--brief", "<file>"}}).fill(nil); err == nil {
		t.Errorf("a placeholder with no value was accepted")
	}
}
