package harness

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var testTarget = WiringTarget{FMControl: "/opt/fm bin/fm-control", Home: "/h", ID: "t1", Gen: "s1.2"}

func claudeTel(t *testing.T) Telemetry {
	h, _ := Lookup("claude")
	tel, ok := h.Telemetry()
	if !ok {
		t.Fatal("claude has no telemetry row")
	}
	return tel
}

func TestMergeClaudeSettingsKeepsTheUsersContentAndIsIdempotent(t *testing.T) {
	user := []byte(`{"model":"sonnet","n":1.50,"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo mine"}]}]}}`)
	once, err := MergeHookSettings(user, claudeTel(t), testTarget)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := MergeHookSettings(once, claudeTel(t), testTarget)
	if err != nil {
		t.Fatal(err)
	}
	if string(once) != string(twice) {
		t.Fatalf("a second merge changed the file:\n%s\n---\n%s", once, twice)
	}
	if n := strings.Count(string(once), TelemetryMarker); n != len(claudeTel(t).Events) {
		t.Fatalf("%d fmctl hooks, want one per event (%d):\n%s", n, len(claudeTel(t).Events), once)
	}
	var doc struct {
		Model string
		N     json.Number
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct{ Command string }
		}
	}
	if err := json.Unmarshal(once, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Model != "sonnet" || doc.N.String() != "1.50" {
		t.Fatalf("the user's keys changed: %+v", doc)
	}
	stop := doc.Hooks["Stop"]
	if len(stop) != 2 || stop[0].Hooks[0].Command != "echo mine" {
		t.Fatalf("Stop hooks = %+v, want the user's first and fmctl's after", stop)
	}
	want := `exec '/opt/fm bin/fm-control' agent-event --home /h t1 turn-finished --gen s1.2 ` + TelemetryMarker
	if got := stop[1].Hooks[0].Command; got != want {
		t.Fatalf("Stop command = %q, want %q", got, want)
	}
	if m := doc.Hooks["Notification"][0].Matcher; m != "permission_prompt|elicitation_dialog" {
		t.Fatalf("Notification matcher = %q", m)
	}

	doc2, err := UnmergeHookSettings(once)
	if err != nil {
		t.Fatal(err)
	}
	back, empty, err := HookSettingsBytes(doc2)
	if err != nil || empty {
		t.Fatalf("unmerge: empty=%v err=%v", empty, err)
	}
	var got, orig map[string]any
	json.Unmarshal(back, &got)
	json.Unmarshal(user, &orig)
	if !reflect.DeepEqual(got, orig) {
		t.Fatalf("unmerge did not give back the user's file:\n%s", back)
	}
}

func TestUnmergeOfOnlyFmctlHooksLeavesNothing(t *testing.T) {
	merged, err := MergeHookSettings(nil, claudeTel(t), testTarget)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := UnmergeHookSettings(merged)
	if err != nil {
		t.Fatal(err)
	}
	if _, empty, _ := HookSettingsBytes(doc); !empty {
		t.Fatalf("left %v, want an empty document (the file is deleted)", doc)
	}
}

func TestClaudeSettingsThatAreNotClaudesShapeAreRefused(t *testing.T) {
	for _, bad := range []string{`[1]`, `{"hooks":[]}`, `{"hooks":{"Stop":{}}}`, `{not json`} {
		if _, err := MergeHookSettings([]byte(bad), claudeTel(t), testTarget); err == nil || !strings.Contains(err.Error(), "refusing to edit") {
			t.Errorf("%s: err = %v, want a refusal", bad, err)
		}
	}
}

func TestScriptRenderersCarryEveryMappedEvent(t *testing.T) {
	for _, name := range []string{"opencode", "pi"} {
		h, _ := Lookup(name)
		tel, _ := h.Telemetry()
		var out string
		if tel.Mechanism == MechOpencodePlugin {
			out = string(RenderOpencodePlugin(tel, testTarget))
		} else {
			out = string(RenderPiExtension(tel, testTarget))
		}
		for _, e := range tel.Events {
			if e.Native == "plugin-init" {
				if !strings.Contains(out, `fmReport("`+e.Event+`")`) {
					t.Errorf("%s: start-up event %s not reported:\n%s", name, e.Event, out)
				}
				continue
			}
			if !strings.Contains(out, `"`+e.Native+`": "`+e.Event+`"`) {
				t.Errorf("%s: %s -> %s missing:\n%s", name, e.Native, e.Event, out)
			}
		}
		if !strings.Contains(out, `const FM_CMD = ["/opt/fm bin/fm-control","agent-event","--home","/h","t1"];`) ||
			!strings.Contains(out, `const FM_GEN = "s1.2";`) || !strings.Contains(out, "timeout: 2000") {
			t.Errorf("%s: entry point, gen or timeout wrong:\n%s", name, out)
		}
	}
}

func TestTelemetryArgs(t *testing.T) {
	codex, _ := Lookup("codex")
	args := codex.TelemetryArgs(testTarget, "/h/state")
	if !reflect.DeepEqual(args[:3], codexTrustFlags) {
		t.Fatalf("codex args start %q, want the hook feature and trust flags", args[:3])
	}
	hooks := map[string]string{}
	var notify []string
	for i := 3; i+1 < len(args); i += 2 {
		if args[i] != "-c" {
			t.Fatalf("codex arg %d = %q, want -c", i, args[i])
		}
		k, v, _ := strings.Cut(args[i+1], "=")
		if k == "notify" {
			if err := json.Unmarshal([]byte(v), &notify); err != nil {
				t.Fatalf("notify is not a TOML/JSON string array: %v", err)
			}
			continue
		}
		const pre, post = `[{hooks=[{type="command",command=`, `}]}]`
		if !strings.HasPrefix(v, pre) || !strings.HasSuffix(v, post) {
			t.Fatalf("%s = %s, not one command hook", k, v)
		}
		var cmd string
		if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(v, pre), post)), &cmd); err != nil {
			t.Fatalf("%s command is not a TOML basic string: %v", k, err)
		}
		hooks[strings.TrimPrefix(k, "hooks.")] = cmd
	}
	want := []string{"/opt/fm bin/fm-control", "agent-event", "--home", "/h", "t1", "turn-finished", "--gen", "s1.2", "--notify-payload"}
	if !reflect.DeepEqual(notify, want) {
		t.Fatalf("notify argv = %q, want %q", notify, want)
	}
	if got := hooks["Interrupt"]; got != testTarget.HookFor("turn-finished").Shell {
		t.Fatalf("Interrupt hook = %q", got)
	}
	if got := hooks["UserPromptSubmit"]; got != testTarget.HookFor("prompt-submitted").Shell {
		t.Fatalf("UserPromptSubmit hook = %q", got)
	}
	pi, _ := Lookup("pi")
	if got := pi.TelemetryArgs(testTarget, "/h/state"); !reflect.DeepEqual(got, []string{"-e", "/h/state/t1.pi-ext.ts"}) {
		t.Fatalf("pi args = %q", got)
	}
	grok, _ := Lookup("grok")
	if got := grok.TelemetryArgs(testTarget, "/h/state"); got != nil {
		t.Fatalf("grok has no telemetry row, got %q", got)
	}
	withState := testTarget
	withState.StateDir = "/s"
	if got := withState.HookFor("waiting").Argv[4:6]; !slices.Equal(got, []string{"--state-dir", "/s"}) {
		t.Fatalf("state override not carried: %q", withState.HookFor("waiting").Argv)
	}
}

// Every telemetry file is one of the harness's Wiring paths, so retiring
// the table's wiring retires the telemetry too.
func TestTelemetryFilesAreWiringPaths(t *testing.T) {
	for _, h := range Harnesses() {
		tel, ok := h.Telemetry()
		if !ok || tel.File == "" {
			continue
		}
		found := false
		for _, w := range h.Wiring {
			found = found || w == tel.File
		}
		if !found {
			t.Errorf("%s: telemetry file %s is not among its Wiring %q", h.Name, tel.File, h.Wiring)
		}
		for _, e := range tel.Events {
			if !strings.Contains(" session-start prompt-submitted turn-finished waiting session-end ", " "+e.Event+" ") {
				t.Errorf("%s: %s maps to %q, not an allowlisted event", h.Name, e.Native, e.Event)
			}
		}
	}
}

func TestMergeGeminiSettingsUsesGeminisHookForm(t *testing.T) {
	h, _ := Lookup("gemini")
	tel, ok := h.Telemetry()
	if !ok || !tel.MergesSettings() {
		t.Fatal("gemini has no settings-merging telemetry row")
	}
	got := mergedHooks(t, []byte(`{"ui":{"theme":"x"}}`), tel)["BeforeAgent"]
	if len(got) != 1 || len(got[0].Hooks) != 1 {
		t.Fatalf("BeforeAgent = %+v, want one fmctl hook", got)
	}
	hook := got[0].Hooks[0]
	// gemini's timeout is milliseconds; its deny on exit status 2 or 127
	// must never reach the user's prompt, so the command always exits 0.
	want := `[ -x '/opt/fm bin/fm-control' ] && exec '/opt/fm bin/fm-control' agent-event --quiet --home /h t1 prompt-submitted --gen s1.2 >/dev/null 2>&1; exit 0 ` + TelemetryMarker
	if hook.Command != want || hook.Timeout != 5000 || hook.Name != "fmctl-telemetry" {
		t.Fatalf("BeforeAgent hook = %+v, want command %q, timeout 5000", hook, want)
	}
}

// qwen takes claude's event names with gemini's hook form, and two
// Notification groups told apart by their matchers.
func TestMergeQwenSettingsUsesGeminisFormWithMatchers(t *testing.T) {
	h, _ := Lookup("qwen")
	tel, ok := h.Telemetry()
	if !ok || !tel.MergesSettings() {
		t.Fatal("qwen has no settings-merging telemetry row")
	}
	hooks := mergedHooks(t, nil, tel)
	submit := hooks["UserPromptSubmit"]
	if len(submit) != 1 || len(submit[0].Hooks) != 1 || submit[0].Hooks[0].Timeout != 5000 || submit[0].Hooks[0].Name != "fmctl-telemetry" {
		t.Fatalf("UserPromptSubmit = %+v, want one fmctl hook with a 5000 ms timeout", submit)
	}
	matchers := map[string]string{}
	for _, g := range hooks["Notification"] {
		if len(g.Hooks) == 1 {
			matchers[g.Matcher] = g.Hooks[0].Command
		}
	}
	if len(matchers) != 2 || !strings.Contains(matchers["idle_prompt"], " turn-finished ") || !strings.Contains(matchers["permission_prompt"], " waiting ") {
		t.Fatalf("Notification groups = %v, want idle_prompt -> turn-finished and permission_prompt -> waiting", matchers)
	}
}

// hookGroup is one matcher group of a merged settings file, as read back.
type hookGroup struct {
	Matcher string
	Hooks   []struct {
		Name, Command string
		Timeout       int
	}
}

// mergedHooks merges tel's hooks into existing and reads the groups back.
func mergedHooks(t *testing.T, existing []byte, tel Telemetry) map[string][]hookGroup {
	t.Helper()
	merged, err := MergeHookSettings(existing, tel, testTarget)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Hooks map[string][]hookGroup }
	if err := json.Unmarshal(merged, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Hooks
}
