package fakeframe

import (
	"slices"
	"testing"

	"fmctl/harness"
)

// Every harness that runs under its own name is an agent to every fake, so
// a harness added to the table is emulated without touching a fake.
func TestAgentsAreTheTablesBinaries(t *testing.T) {
	n := 0
	for _, h := range harness.Harnesses() {
		if got, want := IsAgent(h.Launch.Binary), h.ArgvScript == ""; got != want {
			t.Errorf("IsAgent(%q) = %v, want %v (argv_script %q)", h.Launch.Binary, got, want, h.ArgvScript)
		}
		if IsExitCommand(" "+h.ExitCommand+" ") != true {
			t.Errorf("%s's exit command %q does not end the emulated agent", h.Name, h.ExitCommand)
		}
		n++
	}
	if n < 5 {
		t.Fatalf("only %d harnesses in the table", n)
	}
	for _, not := range []string{"bash", "node", "", "claude-2", "vim"} {
		if IsAgent(not) {
			t.Errorf("IsAgent(%q) = true", not)
		}
	}
	if IsExitCommand("/exit now") || IsExitCommand("exit") {
		t.Error("IsExitCommand accepted a line that is not an exit command")
	}
}

func TestCommandSkipsAssignmentsAndEnvOptions(t *testing.T) {
	cases := []struct {
		line, name string
		args       []string
		agent      bool
	}{
		{`claude --model x`, "claude", []string{"--model", "x"}, true},
		{`A=1 B='x y' codex -m m`, "codex", []string{"-m", "m"}, true},
		{`env -u CLAUDECODE -uGROK_AGENT X=1 /usr/bin/cursor-agent --trust`, "/usr/bin/cursor-agent", []string{"--trust"}, true},
		{`OPENCODE_CONFIG_CONTENT='{"permission":{"*":"allow"}}' opencode --prompt 'read it'`, "opencode", []string{"--prompt", "read it"}, true},
		{`cd '/w t'`, "cd", []string{"/w t"}, false},
		{`A=1`, "", nil, false},
		{`gemini -i x`, "gemini", []string{"-i", "x"}, false},
	}
	for _, c := range cases {
		name, args := Command(c.line)
		if name != c.name || !slices.Equal(args, c.args) {
			t.Errorf("Command(%q) = %q %q, want %q %q", c.line, name, args, c.name, c.args)
		}
		if _, agent := LaunchedAgent(c.line); agent != c.agent {
			t.Errorf("LaunchedAgent(%q) = %v, want %v", c.line, agent, c.agent)
		}
	}
}
