package harness_test

import (
	"testing"

	"fmctl/harness"
)

func className(c harness.ProcessClass) string {
	switch c {
	case harness.ProcessAgent:
		return "agent"
	case harness.ProcessShell:
		return "shell"
	}
	return "other"
}

func TestClassifyProcessNames(t *testing.T) {
	cases := map[string]harness.ProcessClass{
		// shells, including login shells and absolute paths
		"bash": harness.ProcessShell, "-bash": harness.ProcessShell, "zsh": harness.ProcessShell, "-zsh": harness.ProcessShell,
		"sh": harness.ProcessShell, "dash": harness.ProcessShell, "fish": harness.ProcessShell, "/bin/bash": harness.ProcessShell,
		"ksh": harness.ProcessShell, "tcsh": harness.ProcessShell, " bash ": harness.ProcessShell,
		// agents
		"claude": harness.ProcessAgent, "codex": harness.ProcessAgent, "opencode": harness.ProcessAgent,
		"pi": harness.ProcessAgent, "pi-signed": harness.ProcessAgent, "grok": harness.ProcessAgent,
		"kimi": harness.ProcessAgent, "cursor-agent": harness.ProcessAgent, "agy": harness.ProcessAgent,
		"muse": harness.ProcessAgent, "muse-bin-linux": harness.ProcessAgent, "/usr/local/bin/claude": harness.ProcessAgent,
		"Claude": harness.ProcessAgent, "codex-linux-x64": harness.ProcessAgent,
		"kilo": harness.ProcessAgent, ".kilo": harness.ProcessAgent, "kilocode": harness.ProcessAgent,
		// neither: unattributed
		"vim": harness.ProcessOther, "pip": harness.ProcessOther, "pipewire": harness.ProcessOther, "pix": harness.ProcessOther,
		"node": harness.ProcessOther, "python3": harness.ProcessOther, "less": harness.ProcessOther, "": harness.ProcessOther,
		"-": harness.ProcessOther, "/": harness.ProcessOther, "bashful": harness.ProcessOther, "cursor": harness.ProcessOther,
		"amuse": harness.ProcessOther, "agyx": harness.ProcessOther, "sleep": harness.ProcessOther,
		"kilobytes": harness.ProcessOther, "kilo.sh": harness.ProcessOther,
	}
	for name, want := range cases {
		if got := harness.ClassifyProcess(name); got != want {
			t.Errorf("ClassifyProcess(%q) = %s, want %s", name, className(got), className(want))
		}
	}
}

func TestClassifyArgvReadsInterpreterScripts(t *testing.T) {
	cases := []struct {
		comm string
		argv []string
		want harness.ProcessClass
	}{
		{"node", []string{"node", "/x/codex.js"}, harness.ProcessAgent},
		{"node", []string{"/usr/bin/node", "--enable-source-maps", "/usr/lib/node_modules/@openai/codex/bin/codex.js"}, harness.ProcessAgent},
		{"bun", []string{"bun", "/opt/node_modules/opencode-ai/bin/opencode"}, harness.ProcessAgent},
		// kilo 7.7.7 in a pane: its launcher, then the native binary it execs
		{"node", []string{"node", "/x/node_modules/.bin/kilo"}, harness.ProcessAgent},
		{".kilo", []string{"/x/node_modules/@kilocode/cli/bin/.kilo"}, harness.ProcessAgent},
		{"MainThread", []string{"node", "/x/claude"}, harness.ProcessAgent},
		{"node", []string{"node", "/x/server.js"}, harness.ProcessOther},
		// only the first non-flag argument is the script
		{"node", []string{"node", "/x/server.js", "codex"}, harness.ProcessOther},
		{"python3", []string{"python3", "-m", "http.server"}, harness.ProcessOther},
		{"vim", []string{"vim", "claude.md"}, harness.ProcessOther},
		{"bash", []string{"-bash"}, harness.ProcessShell},
		{"bash", []string{"bash", "claude"}, harness.ProcessShell}, // a shell running a script named claude is still the shell
		{"claude", nil, harness.ProcessAgent},
		{"pip", []string{"pip", "install", "pi"}, harness.ProcessOther},
		{"npm", []string{"/usr/bin/claude"}, harness.ProcessAgent},
	}
	for _, c := range cases {
		if got := harness.ClassifyArgv(c.comm, c.argv); got != c.want {
			t.Errorf("ClassifyArgv(%q, %q) = %s, want %s", c.comm, c.argv, className(got), className(c.want))
		}
	}
}

// Every verified harness's own binary must classify as an agent, or a live
// agent launched from the table would read as "other" and be refused.
func TestEveryLaunchBinaryClassifiesAsAgent(t *testing.T) {
	for _, h := range harness.Harnesses() {
		if h.ArgvScript != "" {
			continue // TestArgvScriptHarnessIsAttributedByArgvOnly
		}
		if got := harness.ClassifyProcess(h.Launch.Binary); got != harness.ProcessAgent {
			t.Errorf("%s launches %q, which classifies as %s", h.Name, h.Launch.Binary, className(got))
		}
	}
}

func TestAgentNameNamesWhatClassified(t *testing.T) {
	cases := []struct {
		comm string
		argv []string
		want string
	}{
		{"claude", nil, "claude"},
		{"2.1.3", []string{"/home/u/.local/bin/claude", "--x"}, "claude"},
		{"node", []string{"/usr/bin/node", "--enable-source-maps", "/usr/lib/node_modules/@openai/codex/bin/codex.js"}, "codex.js"},
		{"node", []string{"node", "/x/server.js"}, ""},
		{"bash", []string{"bash", "claude"}, ""},
	}
	for _, c := range cases {
		if got := harness.AgentName(c.comm, c.argv); got != c.want {
			t.Errorf("AgentName(%q, %q) = %q, want %q", c.comm, c.argv, got, c.want)
		}
	}
}

func TestOwnsProcessKeepsFamiliesApart(t *testing.T) {
	h := func(name string) harness.Harness {
		x, ok := harness.Lookup(name)
		if !ok {
			t.Fatalf("no harness %s", name)
		}
		return x
	}
	yes := map[string][]string{
		"claude": {"claude", "/usr/local/bin/claude", "Claude"},
		"codex":  {"codex", "codex.js", "codex-linux-x64"},
		"cursor": {"cursor-agent"},
		"pi":     {"pi", "pi-launcher"},
		"muse":   {"muse", "muse-bin-linux"},
		"kilo":   {"kilo", ".kilo", "kilocode"},
	}
	no := map[string][]string{
		"claude":    {"codex", "bash", "vim", ""},
		"codex":     {"claude", "opencode"},
		"opencode":  {"codex", ".kilo", "kilo"},
		"kilo":      {"opencode", ".opencode", "kilobytes"},
		"pi":        {"pi-signed", "pip"},
		"pi-signed": {"pi", "pi-launcher"},
		"cursor":    {"cursor"},
	}
	for name, procs := range yes {
		for _, p := range procs {
			if !h(name).OwnsProcess(p) {
				t.Errorf("%s does not own process %q, want it to", name, p)
			}
		}
	}
	for name, procs := range no {
		for _, p := range procs {
			if h(name).OwnsProcess(p) {
				t.Errorf("%s owns process %q, want it not to", name, p)
			}
		}
	}
}

// gemini runs as node (comm and pane_current_command "node", and a re-exec'd
// child with node flags first); only its argv script names it, and no other
// node program becomes an agent.
func TestArgvScriptHarnessIsAttributedByArgvOnly(t *testing.T) {
	gemini, _ := harness.Lookup("gemini")
	cases := []struct {
		comm string
		argv []string
		want string
	}{
		{"node", []string{"node", "/w/.cache/agents/node_modules/.bin/gemini", "--approval-mode=yolo"}, "gemini"},
		{"node", []string{"/usr/bin/node", "--max-old-space-size=4096", "/w/node_modules/.bin/gemini"}, "gemini"},
		{"node", []string{"node", "/srv/app/server.js"}, ""},
		{"node", []string{"node", "/srv/gemini-proxy.js"}, ""},
		{"node", []string{"node"}, ""},
		{"gemini", []string{"gemini"}, ""},
		// qwen re-executes itself as a child node with the same script.
		{"node", []string{"node", "/w/.cache/agents/node_modules/.bin/qwen", "--approval-mode=yolo", "-i", "Read the brief"}, "qwen"},
		{"node", []string{"/usr/bin/node", "/w/.cache/agents/node_modules/.bin/qwen", "--approval-mode=yolo"}, "qwen"},
		{"node", []string{"node", "/srv/qwen-proxy.js"}, ""},
	}
	for _, c := range cases {
		if got := harness.AgentName(c.comm, c.argv); got != c.want {
			t.Errorf("AgentName(%q, %q) = %q, want %q", c.comm, c.argv, got, c.want)
		}
	}
	if harness.ClassifyProcess("node") != harness.ProcessOther {
		t.Error("a bare node process must not classify as an agent")
	}
	if !gemini.OwnsProcess("gemini") || gemini.OwnsProcess("node") {
		t.Error("gemini must own its argv script's name and not node")
	}
	qwen, _ := harness.Lookup("qwen")
	if !qwen.OwnsProcess("qwen") || qwen.OwnsProcess("gemini") || gemini.OwnsProcess("qwen") {
		t.Error("qwen and gemini must each own only their own argv script")
	}
	cline, _ := harness.Lookup("cline")
	for name, want := range map[string]bool{"cline": true, ".cline": true, "incline": false, "node": false} {
		if cline.OwnsProcess(name) != want {
			t.Errorf("cline owns %q: %v, want %v", name, !want, want)
		}
	}
	if got := harness.AgentName("node", []string{"node", "/w/node_modules/cline/bin/cline", "--tui"}); got != "cline" {
		t.Errorf("cline's launcher under node is %q, want cline", got)
	}
	claude, _ := harness.Lookup("claude")
	if claude.OwnsProcess("gemini") {
		t.Error("claude must not own gemini's process")
	}
}
