package harness_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fmctl/harness"
)

func mustHarness(t *testing.T, name string) harness.Harness {
	t.Helper()
	h, ok := harness.Lookup(name)
	if !ok {
		t.Fatalf("no harness %s", name)
	}
	return h
}

func mustLine(t *testing.T, name string, p harness.LaunchParams) string {
	t.Helper()
	line, err := mustHarness(t, name).LaunchLine(p)
	if err != nil {
		t.Fatalf("%s.LaunchLine(%+v): %v", name, p, err)
	}
	return line
}

func TestLaunchLineFlagsPerHarness(t *testing.T) {
	const brief = "/home/b/brief.md"
	prompt := "'Read the brief at /home/b/brief.md and follow it exactly.'"
	p := harness.LaunchParams{Model: "m1", Effort: "high", Worktree: "/wt", Brief: brief}
	cases := []struct {
		name string
		want string
	}{
		{"claude", "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION='false' claude --dangerously-skip-permissions --model 'm1' --effort 'high' " + prompt},
		{"codex", `codex --dangerously-bypass-approvals-and-sandbox -m 'm1' -c 'model_reasoning_effort="high"' ` + prompt},
		{"opencode", `OPENCODE_CONFIG_CONTENT='{"permission":{"*":"allow"}}' opencode --model 'm1' --prompt ` + prompt},
		{"kilo", `KILO_CONFIG_CONTENT='{"permission":{"*":"allow"}}' kilo --model 'm1' --prompt ` + prompt},
		{"pi", "FM_PI_HARNESS='pi' pi --model 'm1' --thinking 'high' " + prompt},
		{"gemini", "GEMINI_CLI_TRUST_WORKSPACE='true' gemini --approval-mode=yolo --model 'm1' -i " + prompt},
		{"qwen", "qwen --approval-mode=yolo --model 'm1' -i " + prompt},
		{"copilot", "COPILOT_ALLOW_ALL='true' copilot --yolo --model 'm1' --reasoning-effort 'high' -i " + prompt},
		{"cline", "CLINE_LOG_ENABLED='true' CLINE_LOG_LEVEL='info' CLINE_LOG_PATH='' cline --tui --auto-approve true --model 'm1' --thinking 'high' " + prompt},
		{"pi-signed", "FM_PI_HARNESS='pi-signed' pi-signed --model 'm1' --thinking 'high' " + prompt},
		{"grok", "grok --always-approve --model 'm1' --reasoning-effort 'high' " + prompt},
		{"kimi", "kimi --auto --model 'm1'"},
		{"cursor", "env -u CLAUDECODE -u PI_CODING_AGENT -u GROK_AGENT -u FM_PI_HARNESS -u CURSOR_INVOKED_AS cursor-agent --trust --yolo --model 'm1' --workspace '/wt' " + prompt},
		{"agy", "env -u CLAUDECODE -u PI_CODING_AGENT -u GROK_AGENT -u FM_PI_HARNESS agy --dangerously-skip-permissions --model 'm1' --add-dir '/wt' -i " + prompt},
		{"muse", "env -u CLAUDECODE -u PI_CODING_AGENT -u GROK_AGENT -u FM_PI_HARNESS muse --yolo --model 'm1' --reasoning-effort 'high' " + prompt},
	}
	if len(cases) != len(harness.Names()) {
		t.Fatalf("cases cover %d harnesses, table has %d", len(cases), len(harness.Names()))
	}
	for _, c := range cases {
		if got := mustLine(t, c.name, p); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestLaunchLineEffortMapping(t *testing.T) {
	cases := []struct {
		harness, effort string
		contains        string // "" = no effort word at all
	}{
		{"claude", "max", "--effort 'max'"},
		{"claude", "low", "--effort 'low'"},
		{"codex", "xhigh", `-c 'model_reasoning_effort="xhigh"'`},
		{"codex", "max", ""}, // codex has no max: omitted, not sent as a rejected value
		{"grok", "xhigh", ""},
		{"grok", "max", ""},
		{"grok", "medium", "--reasoning-effort 'medium'"},
		{"muse", "max", "--reasoning-effort 'ultra'"},
		{"muse", "xhigh", "--reasoning-effort 'xhigh'"},
		{"pi", "max", "--thinking 'max'"},
		{"opencode", "high", ""},
		{"kimi", "high", ""},
		{"cursor", "high", ""},
		{"agy", "high", ""},
	}
	for _, c := range cases {
		line := mustLine(t, c.harness, harness.LaunchParams{Effort: c.effort, Brief: "/b"})
		h := mustHarness(t, c.harness)
		if c.contains == "" {
			if h.Launch.EffortFlag != "" && strings.Contains(line, h.Launch.EffortFlag) {
				t.Errorf("%s effort %s: line carries %s: %s", c.harness, c.effort, h.Launch.EffortFlag, line)
			}
			if strings.Contains(line, "'"+c.effort+"'") || strings.Contains(line, `"`+c.effort+`"`) {
				t.Errorf("%s effort %s: level leaked onto the line: %s", c.harness, c.effort, line)
			}
			continue
		}
		if !strings.Contains(line, c.contains) {
			t.Errorf("%s effort %s: line lacks %q: %s", c.harness, c.effort, c.contains, line)
		}
	}
	if strings.Contains(mustLine(t, "muse", harness.LaunchParams{Effort: "max"}), "'max'") {
		t.Error("muse max was sent as max, want ultra")
	}
}

func TestLaunchLineDefaultsOmitModelAndEffort(t *testing.T) {
	for _, name := range harness.Names() {
		h := mustHarness(t, name)
		for _, v := range []string{"", "default"} {
			line := mustLine(t, name, harness.LaunchParams{Model: v, Effort: v, Brief: "/b"})
			if strings.Contains(line, " "+h.Launch.ModelFlag+" ") {
				t.Errorf("%s model=%q: line has %s: %s", name, v, h.Launch.ModelFlag, line)
			}
			if h.Launch.EffortFlag != "" && strings.Contains(line, h.Launch.EffortFlag) {
				t.Errorf("%s effort=%q: line has %s: %s", name, v, h.Launch.EffortFlag, line)
			}
		}
	}
}

func TestLaunchLinePromptPlacement(t *testing.T) {
	p := harness.LaunchParams{Brief: "/x/brief.md", Worktree: "/w"}
	if l := mustLine(t, "opencode", p); !strings.Contains(l, "--prompt 'Read the brief at /x/brief.md") {
		t.Errorf("opencode prompt not after --prompt: %s", l)
	}
	if l := mustLine(t, "agy", p); !strings.Contains(l, " -i 'Read the brief at /x/brief.md") || !strings.Contains(l, "--add-dir '/w'") {
		t.Errorf("agy: want --add-dir and -i prompt: %s", l)
	}
	if l := mustLine(t, "cursor", p); !strings.Contains(l, "--workspace '/w'") {
		t.Errorf("cursor lacks --workspace: %s", l)
	}
	if l := mustLine(t, "kimi", p); strings.Contains(l, "Read the brief") || strings.Contains(l, "/x/brief.md") {
		t.Errorf("kimi takes its prompt through the composer, yet the line carries it: %s", l)
	}
	if h := mustHarness(t, "kimi"); h.Launch.PromptVia != harness.PromptComposer {
		t.Errorf("kimi PromptVia = %s, want composer", h.Launch.PromptVia)
	}
	if l := mustLine(t, "claude", harness.LaunchParams{}); strings.Contains(l, "Read the brief") {
		t.Errorf("no brief, yet a prompt: %s", l)
	}
}

func TestLaunchLineRefusesBadModelAndEffort(t *testing.T) {
	for _, m := range []string{"m'1", "a b", "$(id)", "`id`", "x;y", strings.Repeat("m", 129), "m\n"} {
		if _, err := mustHarness(t, "claude").LaunchLine(harness.LaunchParams{Model: m}); err == nil {
			t.Errorf("model %q accepted", m)
		}
	}
	for _, m := range []string{"claude-opus-4", "openai/gpt-5", "gemini-2.5-pro@x", "a:b+c"} {
		if _, err := mustHarness(t, "claude").LaunchLine(harness.LaunchParams{Model: m}); err != nil {
			t.Errorf("model %q refused: %v", m, err)
		}
	}
	for _, e := range []string{"ultra", "HIGH", "none", " high"} {
		if _, err := mustHarness(t, "claude").LaunchLine(harness.LaunchParams{Effort: e}); err == nil {
			t.Errorf("effort %q accepted", e)
		}
	}
}

func TestLaunchLineBinaryOverrideAndExtraArgs(t *testing.T) {
	l := mustLine(t, "claude", harness.LaunchParams{Binary: "/opt/claude bin/claude", ExtraArgs: []string{"--verbose"}, Brief: "/b"})
	want := "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION='false' '/opt/claude bin/claude' --dangerously-skip-permissions '--verbose' 'Read the brief at /b and follow it exactly.'"
	if l != want {
		t.Errorf("\n got %s\nwant %s", l, want)
	}
}

// argvScript prints each argument and the variables named in SHOW_VARS,
// NUL-separated, so the test sees exactly the words the shell produced.
const argvScript = `#!/bin/sh
for a; do printf 'ARG %s\0' "$a"; done
for v in $SHOW_VARS; do
  if val=$(printenv "$v"); then printf 'ENV %s=%s\0' "$v" "$val"; else printf 'UNSET %s\0' "$v"; fi
done
`

// TestLaunchLineQuotingSurvivesAShell runs every harness's line through
// /bin/sh with the binary replaced by an argv printer: hostile brief,
// worktree and extra-arg values must arrive as single literal words, and
// nothing in them may execute.
func TestLaunchLineQuotingSurvivesAShell(t *testing.T) {
	dir := t.TempDir()
	printer := filepath.Join(dir, "printargs")
	if err := os.WriteFile(printer, []byte(argvScript), 0o755); err != nil {
		t.Fatal(err)
	}
	hostile := `it's a "brief" $(touch pwned1) ` + "`touch pwned2`" + ` ; touch pwned3 & | > < * ? ~ \ ! $HOME ${x}`
	brief := "/tmp/" + hostile + "/brief.md"
	worktree := "/wt/" + hostile
	extra := []string{"--extra", "two words", "'", "", "line1\nline2", "-c 'a=\"b\"'"}

	for _, name := range harness.Names() {
		t.Run(name, func(t *testing.T) {
			h := mustHarness(t, name)
			line := mustLine(t, name, harness.LaunchParams{Model: "prov/m-1.5@x", Effort: "high", Worktree: worktree, Brief: brief, Binary: printer, ExtraArgs: extra})
			var show []string
			for _, kv := range h.Launch.Env {
				k, _, _ := strings.Cut(kv, "=")
				show = append(show, k)
			}
			show = append(show, h.Launch.Unset...)
			cmd := exec.Command("/bin/sh", "-c", line)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "SHOW_VARS="+strings.Join(show, " "))
			for _, u := range h.Launch.Unset {
				cmd.Env = append(cmd.Env, u+"=inherited")
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("sh -c %s: %v", line, err)
			}
			var args []string
			envs := map[string]string{}
			var unset []string
			for _, w := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
				switch {
				case strings.HasPrefix(w, "ARG "):
					args = append(args, strings.TrimPrefix(w, "ARG "))
				case strings.HasPrefix(w, "ENV "):
					k, v, _ := strings.Cut(strings.TrimPrefix(w, "ENV "), "=")
					envs[k] = v
				case strings.HasPrefix(w, "UNSET "):
					unset = append(unset, strings.TrimPrefix(w, "UNSET "))
				}
			}
			want := expectedArgv(h, worktree, brief, extra)
			if !slices.Equal(args, want) {
				t.Errorf("argv after the shell:\n got %q\nwant %q\nline: %s", args, want, line)
			}
			for _, kv := range h.Launch.Env {
				k, v, _ := strings.Cut(kv, "=")
				if envs[k] != v {
					t.Errorf("env %s = %q, want %q", k, envs[k], v)
				}
			}
			if !slices.Equal(unset, h.Launch.Unset) {
				t.Errorf("unset vars = %v, want %v (the agent must not inherit them)", unset, h.Launch.Unset)
			}
			for _, f := range []string{"pwned1", "pwned2", "pwned3"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Fatalf("the shell executed part of a value: %s exists", f)
				}
			}
		})
	}
}

// expectedArgv is the argv a harness's printer should see, built from the
// table independently of LaunchLine's string assembly.
func expectedArgv(h harness.Harness, worktree, brief string, extra []string) []string {
	l := h.Launch
	argv := append(append([]string(nil), l.Args...), l.Auto.Args...)
	argv = append(argv, l.ModelFlag, "prov/m-1.5@x")
	if v, ok := l.EffortMap["high"]; ok {
		if l.EffortForm == "codex-config" {
			argv = append(argv, "-c", l.EffortFlag+`="`+v+`"`)
		} else {
			argv = append(argv, l.EffortFlag, v)
		}
	}
	if l.Workspace != "" {
		argv = append(argv, l.Workspace, worktree)
	}
	argv = append(argv, extra...)
	if l.PromptVia == harness.PromptArgument {
		if l.PromptFlag != "" {
			argv = append(argv, l.PromptFlag)
		}
		argv = append(argv, "Read the brief at "+brief+" and follow it exactly.")
	}
	return argv
}

func TestQuoteIsOneShellWord(t *testing.T) {
	for _, s := range []string{"", "'", "''", `a'b'c`, "$(id)", "`id`", "\\", "\n", "a b\tc"} {
		out, err := exec.Command("/bin/sh", "-c", "printf '%s' "+harness.Quote(s)).Output()
		if err != nil {
			t.Fatalf("Quote(%q): %v", s, err)
		}
		if !bytes.Equal(out, []byte(s)) {
			t.Errorf("Quote(%q) came back as %q", s, out)
		}
	}
	for in, want := range map[string]string{"claude": "claude", "/usr/bin/x": "/usr/bin/x", "": "''", "a b": "'a b'", "a$b": "'a$b'", "a'b": `'a'\''b'`} {
		if got := harness.QuoteIfNeeded(in); got != want {
			t.Errorf("QuoteIfNeeded(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestWiringPathsPerHarness(t *testing.T) {
	cases := map[string][]string{
		"claude":    {"/wt/.claude/settings.local.json"},
		"opencode":  {"/wt/.opencode/plugins/fm-busy-state.js"},
		"pi":        {"/st/t1.pi-ext.ts"},
		"pi-signed": {"/st/t1.pi-ext.ts"},
		"grok":      {"/wt/.fm-grok-turnend", "/st/t1.grok-turnend-token"},
		"kimi":      {"/wt/.fm-kimi-turnend", "/st/t1.kimi-turnend-token"},
		"muse":      {"/st/t1.muse-session", "/st/t1.muse-session-current"},
		"cursor":    {"/st/t1.cursor-session"},
		"agy":       {"/wt/.fm-agy-turnend", "/st/t1.agy-turnend-token", "/st/t1.agy-session"},
		"codex":     nil,
	}
	for name, want := range cases {
		if got := mustHarness(t, name).WiringPaths("/wt", "/st", "t1"); !slices.Equal(got, want) {
			t.Errorf("%s wiring = %v, want %v", name, got, want)
		}
	}
}

// A secondmate's launch line names its own home and clears the parent's
// directory overrides, ahead of the harness's own variables and after
// env's unsets, so the shell applies both to the agent.
func TestLaunchLineSecondmateHome(t *testing.T) {
	for _, name := range harness.Names() {
		h := mustHarness(t, name)
		line, err := h.LaunchLine(harness.LaunchParams{Worktree: "/sm", Brief: "/b.md", Home: "/homes/it's"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := `FM_STATE_OVERRIDE= FM_DATA_OVERRIDE= FM_CONFIG_OVERRIDE= FM_HOME='/homes/it'\''s' `
		if !strings.Contains(line, want) {
			t.Errorf("%s: %q lacks %q", name, line, want)
		}
		bin := harness.QuoteIfNeeded(h.Launch.Binary)
		if i, j := strings.Index(line, "FM_HOME="), strings.Index(line, " "+bin+" "); j < 0 || i > j {
			t.Errorf("%s: FM_HOME must precede the binary in %q", name, line)
		}
		plain, _ := h.LaunchLine(harness.LaunchParams{Worktree: "/sm", Brief: "/b.md"})
		if strings.Contains(plain, "FM_HOME") {
			t.Errorf("%s: a line without Home sets FM_HOME: %q", name, plain)
		}
	}
}

// The event key is read by the pane's shell from its file as the agent
// starts, first on the line, so it reaches the agent through env -u too and
// is never typed as a value.
func TestLaunchLineReadsTheEventKeyFromItsFile(t *testing.T) {
	for _, name := range []string{"claude", "cursor"} {
		line, err := mustHarness(t, name).LaunchLine(harness.LaunchParams{EventKeyFile: "/h/state/it's.event-key", Brief: "/b"})
		if err != nil {
			t.Fatal(err)
		}
		want := `FM_EVENT_KEY="$(cat '/h/state/it'\''s.event-key')" `
		if !strings.HasPrefix(line, want) {
			t.Errorf("%s: line %q does not start with %q", name, line, want)
		}
	}
	if line, _ := mustHarness(t, "claude").LaunchLine(harness.LaunchParams{Brief: "/b"}); strings.Contains(line, "FM_EVENT_KEY") {
		t.Errorf("an unwired launch names the key: %q", line)
	}
}
