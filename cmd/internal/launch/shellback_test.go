package launch

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"fmctl/cmd/internal/fault"
	"fmctl/harness"
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

// onPath finds what a shell with that PATH would run: the first regular,
// executable file of the name, skipping relative directories, a plain file
// and a directory of the name.
func TestOnPathIsWhatTheShellWouldRun(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel string, mode os.FileMode) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	mk("plain/claude", 0o644)
	mk("bin/claude", 0o755)
	mk("later/claude", 0o755)
	if err := os.MkdirAll(filepath.Join(dir, "isdir", "claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	pathVar := strings.Join([]string{"bin", filepath.Join(dir, "plain"), filepath.Join(dir, "isdir"), "", filepath.Join(dir, "bin"), filepath.Join(dir, "later")}, string(os.PathListSeparator))
	if got, want := onPath(pathVar, "claude"), filepath.Join(dir, "bin", "claude"); got != want {
		t.Errorf("onPath = %q, want %q", got, want)
	}
	if got := onPath(pathVar, "codex"); got != "" {
		t.Errorf("onPath of a missing program = %q, want none", got)
	}
}

// The pane-PATH hint names the binary the caller's PATH has and the exact
// line of the home's fm.toml that pins it; without one, the line to fill.
func TestExplainNamesThePinThatMendsTheLaunch(t *testing.T) {
	claude, _ := harness.Lookup("claude")
	cases := []struct {
		lf   LaunchFailed
		want []string
	}{
		{LaunchFailed{Binary: "claude", Missing: true, Found: "/u/.npm-global/bin/claude", Pins: "/h/config/fm.toml"}, []string{
			"the pane's shell did not find claude on its PATH, but yours finds /u/.npm-global/bin/claude: a login shell may set PATH anew",
			`pin it: in /h/config/fm.toml, under [harness.claude], write binary = "/u/.npm-global/bin/claude"`}},
		{LaunchFailed{Binary: "claude", Missing: true, Pins: "/h/config/fm.toml"}, []string{
			"neither the pane's shell nor your PATH has claude: install it, or pin where it is",
			`pin it: in /h/config/fm.toml, under [harness.claude], write binary = "/absolute/path/to/claude"`}},
		{LaunchFailed{Binary: "/opt/claude", Missing: true, Found: "/usr/bin/claude", Pins: "/h/config/fm.toml"}, []string{
			"the pane's shell cannot run /opt/claude, the binary pinned; your PATH has /usr/bin/claude",
			`pin it: in /h/config/fm.toml, under [harness.claude], write binary = "/usr/bin/claude"`}},
		{LaunchFailed{Binary: "claude"}, []string{"claude ended as soon as it started: read what it printed in the pane"}},
	}
	for _, c := range cases {
		lf := c.lf
		e := Explain(fault.Failed("launch failed"), &lf, claude)
		if !slices.Equal(e.Hints, c.want) {
			t.Errorf("%+v: hints\n%q\nwant\n%q", c.lf, e.Hints, c.want)
		}
	}
}
