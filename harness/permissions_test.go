package harness

import (
	"strings"
	"testing"
)

// Each permission mode's launch line, from the table alone: auto is what
// fmctl always launched; ask drops the auto flags for the harness's own
// dialogs; a harness with no verified ask refuses, naming why.
func TestLaunchLinePermissionModes(t *testing.T) {
	cases := []struct {
		h          string
		mode       PermissionMode
		want, gone string
		refused    string
	}{
		{h: "claude", mode: PermAuto, want: "claude --dangerously-skip-permissions "},
		{h: "claude", mode: "", want: "claude --dangerously-skip-permissions "},
		{h: "claude", mode: PermAsk, want: "claude --permission-mode default ", gone: "dangerously"},
		{h: "codex", mode: PermAsk, want: "codex --ask-for-approval on-request ", gone: "dangerously"},
		{h: "opencode", mode: PermAsk, want: `OPENCODE_CONFIG_CONTENT='{"permission":{"*":"ask"}}' opencode `, gone: "allow"},
		{h: "opencode", mode: PermAuto, want: `OPENCODE_CONFIG_CONTENT='{"permission":{"*":"allow"}}' opencode `},
		{h: "kilo", mode: PermAsk, want: `KILO_CONFIG_CONTENT='{"permission":{"*":"ask"}}' kilo `, gone: "allow"},
		{h: "kilo", mode: PermAuto, want: `KILO_CONFIG_CONTENT='{"permission":{"*":"allow"}}' kilo `},
		{h: "gemini", mode: PermAsk, want: "gemini --approval-mode=default ", gone: "yolo"},
		{h: "cursor", mode: PermAuto, want: "cursor-agent --trust --yolo "},
		{h: "pi", mode: PermAsk, refused: "harness pi has no permission dialog to ask with"},
		{h: "grok", mode: PermAsk, refused: "harness grok has no verified permission mode 'ask'"},
	}
	for _, c := range cases {
		h, _ := Lookup(c.h)
		line, err := h.LaunchLine(LaunchParams{Brief: "/b", Permissions: c.mode})
		switch {
		case c.refused != "":
			if err == nil || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%s %s: %q, %v; want refused with %q", c.h, c.mode, line, err, c.refused)
			}
		case err != nil:
			t.Errorf("%s %s: %v", c.h, c.mode, err)
		case !strings.Contains(line, c.want) || (c.gone != "" && strings.Contains(line, c.gone)):
			t.Errorf("%s %s: %q, want %q without %q", c.h, c.mode, line, c.want, c.gone)
		}
	}
}

func TestParsePermissionMode(t *testing.T) {
	for in, want := range map[string]PermissionMode{"": PermAuto, "auto": PermAuto, "ask": PermAsk} {
		if got, ok := ParsePermissionMode(in); !ok || got != want {
			t.Errorf("ParsePermissionMode(%q) = %q, %v", in, got, ok)
		}
	}
	if _, ok := ParsePermissionMode("yolo"); ok {
		t.Error("yolo parsed as a permission mode")
	}
}

// Only the harnesses whose waiting events name one kind say it.
func TestTelemetryWaitingFor(t *testing.T) {
	for h, want := range map[string]string{"claude": "", "opencode": WaitPermission, "kilo": WaitPermission, "gemini": WaitPermission, "codex": "", "pi": ""} {
		tel, _ := telemetryOf(h)
		if got := tel.WaitingFor(); got != want {
			t.Errorf("%s: waiting_for %q, want %q", h, got, want)
		}
	}
}

func telemetryOf(name string) (Telemetry, bool) {
	h, _ := Lookup(name)
	return h.Telemetry()
}
