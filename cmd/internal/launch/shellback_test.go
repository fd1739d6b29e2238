package launch

import (
	"reflect"
	"strings"
	"testing"
)

func TestShellBackTellsAnEndedLineFromOneNotRunYet(t *testing.T) {
	line := "env -u CLAUDECODE claude --dangerously-skip-permissions 'Read the brief at /home/u/fm/data/t1/brief.md and follow it exactly.'"
	prompt := "u@host:~/wt$"
	// the line as a terminal of 40 columns wraps it, trailing spaces
	// dropped by the capture where a row ends at one
	var wrapped []string
	for s := prompt + " " + line; s != ""; {
		n := min(40, len(s))
		wrapped = append(wrapped, strings.TrimRight(s[:n], " "))
		s = s[n:]
	}
	old := []string{"u@host:~/wt$ claude", "-bash: claude: command not found"} // an earlier attempt
	screen := func(rows ...string) []string { return append(append(append([]string{}, old...), wrapped...), rows...) }
	for _, c := range []struct {
		name    string
		rows    []string
		prompt  string
		failed  bool
		missing bool
		said    []string
	}{
		{"typed, not run yet", screen(), prompt, false, false, nil},
		{"running, nothing drawn", screen(""), prompt, false, false, nil},
		{"bash: not found, prompt back", screen("-bash: claude: command not found", prompt), prompt, true, true, []string{"-bash: claude: command not found"}},
		{"env: no such file, before the prompt", screen("env: 'claude': No such file or directory"), prompt, true, true, []string{"env: 'claude': No such file or directory"}},
		{"zsh", screen("zsh: command not found: claude"), "", true, true, []string{"zsh: command not found: claude"}},
		{"the agent ended at once", screen("Error: no API key", "", prompt), prompt, true, false, []string{"Error: no API key"}},
		{"an unknown prompt proves nothing", screen("Error: no API key", "%"), prompt, false, false, nil},
		{"a first prompt drawn after early echo", screen("Error: no API key", prompt), "envu@host:~/wt$", true, false, []string{"Error: no API key"}},
		{"another program's complaint is not the binary's", screen("cat: x: No such file or directory"), prompt, false, false, nil},
		{"only an old complaint on the screen", screen("starting"), "", false, false, nil},
	} {
		got := shellBack(c.rows, line, c.prompt, "claude")
		if (got != nil) != c.failed {
			t.Errorf("%s: shellBack = %+v, want failed=%v", c.name, got, c.failed)
			continue
		}
		if got == nil {
			continue
		}
		if got.Missing != c.missing || !reflect.DeepEqual(got.Said, c.said) {
			t.Errorf("%s: got missing=%v said=%q, want %v %q", c.name, got.Missing, got.Said, c.missing, c.said)
		}
	}
}

func TestShellBackQuotesTheLastRowsOnly(t *testing.T) {
	rows := []string{"$ agent --go"}
	for i := range 10 {
		rows = append(rows, "trace line "+strings.Repeat("x", i))
	}
	rows = append(rows, "$")
	got := shellBack(rows, "agent --go", "$", "agent")
	if got == nil || len(got.Said) != saidRows || got.Said[saidRows-1] != "trace line xxxxxxxxx" {
		t.Fatalf("shellBack = %+v, want the last %d rows before the prompt", got, saidRows)
	}
}
