package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The renderers below turn a harness's Telemetry row into the file its
// mechanism loads. They are pure: spawn writes what they return.

// hookTimeoutSeconds bounds each settings hook; the entry point itself
// takes milliseconds, so this only matters if the machine stalls. claude
// reads "timeout" in seconds, gemini in milliseconds.
const hookTimeoutSeconds = 5

// jsTimeoutMillis bounds the plugin's and extension's synchronous call.
const jsTimeoutMillis = 2000

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// entryPrefix is the entry point's argv up to the event name, and the gen.
func (w WiringTarget) entryPrefix() (string, string) {
	argv := w.HookFor("EVENT").Argv
	b, _ := json.Marshal(argv[:len(argv)-3])
	return string(b), jsString(w.Gen)
}

func jsReport(w WiringTarget) string {
	prefix, gen := w.entryPrefix()
	return fmt.Sprintf(`const FM_CMD = %s;
const FM_GEN = %s;
function fmReport(event) {
  try {
    spawnSync(FM_CMD[0], [...FM_CMD.slice(1), event, "--gen", FM_GEN], { stdio: "ignore", timeout: %d });
  } catch (_) {}
}
`, prefix, gen, jsTimeoutMillis)
}

func eventMapJS(t Telemetry, skip string) string {
	var b strings.Builder
	b.WriteString("{")
	for i, e := range t.Events {
		if e.Native == skip {
			continue
		}
		if i > 0 && b.Len() > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", jsString(e.Native), jsString(e.Event))
	}
	b.WriteString("}")
	return b.String()
}

func (t Telemetry) eventFor(native string) string {
	for _, e := range t.Events {
		if e.Native == native {
			return e.Event
		}
	}
	return ""
}

// RenderOpencodePlugin is the plugin opencode loads from the worktree: it
// reports plugin start-up, each session.status change (keyed "session.status
// <type>") and the other mapped bus events.
func RenderOpencodePlugin(t Telemetry, w WiringTarget) []byte {
	return []byte(fmt.Sprintf(`// fmctl telemetry for task %s (written by fm-spawn, removed on exit and relaunch).
import { spawnSync } from "node:child_process";
%sconst FM_EVENTS = %s;
export const FmBusyState = async () => {
  fmReport(%s);
  return {
    event: async ({ event }) => {
      let key = event.type;
      if (event.type === "session.status") key += " " + (event.properties?.status?.type ?? "");
      const mapped = FM_EVENTS[key];
      if (mapped) fmReport(mapped);
    },
  };
};
`, w.ID, jsReport(w), eventMapJS(t, "plugin-init"), jsString(t.eventFor("plugin-init"))))
}

// RenderPiExtension is the extension pi loads with -e: one handler per
// mapped pi event.
func RenderPiExtension(t Telemetry, w WiringTarget) []byte {
	return []byte(fmt.Sprintf(`// fmctl telemetry for task %s (written by fm-spawn, removed on exit and relaunch).
import { spawnSync } from "node:child_process";
%sconst FM_EVENTS: Record<string, string> = %s;
export default function (pi: any) {
  for (const [native, event] of Object.entries(FM_EVENTS)) {
    pi.on(native, async () => { fmReport(event); });
  }
}
`, w.ID, jsReport(w), eventMapJS(t, "")))
}

// RenderCopilotHooks is the hooks file copilot loads from the worktree's
// .github/hooks/: one command per mapped event, in its own schema (version
// 1, "bash" and "timeoutSec"). The command is quiet: copilot reads a
// hook's output as its answer (a permissionRequest hook's as a decision).
func RenderCopilotHooks(t Telemetry, w WiringTarget) []byte {
	hooks := map[string]any{}
	for _, e := range t.Events {
		hook := map[string]any{"type": "command", "bash": t.Hook(w, e.Event).QuietShell(), "timeoutSec": hookTimeoutSeconds}
		list, _ := hooks[e.Native].([]any)
		hooks[e.Native] = append(list, hook)
	}
	data, _ := json.MarshalIndent(map[string]any{"version": 1, "hooks": hooks}, "", "  ")
	return append(data, '\n')
}

// settingsHook is one fmctl command hook in the mechanism's own form.
func (t Telemetry) settingsHook(w WiringTarget, event string) map[string]any {
	hook := t.Hook(w, event)
	if t.Mechanism == MechGeminiHooks || t.Mechanism == MechQwenHooks {
		// name: gemini lists a new project hook by name in a warning.
		// qwen reads "timeout" in milliseconds too.
		return map[string]any{"type": "command", "name": "fmctl-telemetry", "command": hook.QuietShell(), "timeout": hookTimeoutSeconds * 1000}
	}
	return map[string]any{"type": "command", "command": hook.Shell, "timeout": hookTimeoutSeconds}
}

// MergeHookSettings adds fmctl's hooks to a settings file (claude's
// settings.local.json, gemini's settings.json), keeping every key and hook
// the user has; any fmctl hooks already there (an older incarnation's) are
// replaced. existing may be nil (no file).
func MergeHookSettings(existing []byte, t Telemetry, w WiringTarget) ([]byte, error) {
	doc, err := UnmergeHookSettings(existing)
	if err != nil {
		return nil, err
	}
	hooks, _ := doc["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	for _, e := range t.Events {
		group := map[string]any{"hooks": []any{t.settingsHook(w, e.Event)}}
		if e.Matcher != "" {
			group["matcher"] = e.Matcher
		}
		list, _ := hooks[e.Native].([]any)
		hooks[e.Native] = append(list, group)
	}
	doc["hooks"] = hooks
	return marshalSettings(doc)
}

// UnmergeHookSettings parses a settings file and removes fmctl's hooks
// (those whose command carries TelemetryMarker), dropping what they leave
// empty. A file that is not the JSON shape claude and gemini document is
// refused rather than rewritten.
func UnmergeHookSettings(existing []byte) (map[string]any, error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(existing)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(existing))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("is not a JSON object (%v); refusing to edit it", err)
		}
	}
	raw, present := doc["hooks"]
	if !present {
		return doc, nil
	}
	hooks, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("has a \"hooks\" value that is not an object; refusing to edit it")
	}
	for name, v := range hooks {
		groups, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("has hooks.%s that is not a list; refusing to edit it", name)
		}
		var kept []any
		for _, g := range groups {
			if g = withoutFmctlHooks(g); g != nil {
				kept = append(kept, g)
			}
		}
		if len(kept) == 0 {
			delete(hooks, name)
		} else {
			hooks[name] = kept
		}
	}
	if len(hooks) == 0 {
		delete(doc, "hooks")
	}
	return doc, nil
}

// withoutFmctlHooks drops fmctl's commands from one matcher group; nil
// when nothing of the group is left.
func withoutFmctlHooks(g any) any {
	group, ok := g.(map[string]any)
	if !ok {
		return g
	}
	list, ok := group["hooks"].([]any)
	if !ok {
		return g
	}
	var kept []any
	for _, h := range list {
		if m, ok := h.(map[string]any); ok {
			if cmd, _ := m["command"].(string); strings.HasSuffix(cmd, TelemetryMarker) {
				continue
			}
		}
		kept = append(kept, h)
	}
	if len(kept) == 0 {
		return nil
	}
	group["hooks"] = kept
	return group
}

func marshalSettings(doc map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// HookSettingsBytes renders a document UnmergeHookSettings returned; an
// empty document means the file should go.
func HookSettingsBytes(doc map[string]any) ([]byte, bool, error) {
	if len(doc) == 0 {
		return nil, true, nil
	}
	data, err := marshalSettings(doc)
	return data, false, err
}
