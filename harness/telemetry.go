package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Mechanism names how a harness reports its own lifecycle events.
type Mechanism string

const (
	// MechClaudeHooks: command hooks merged into the worktree's
	// .claude/settings.local.json.
	MechClaudeHooks Mechanism = "claude-hooks"
	// MechOpencodePlugin: a plugin file opencode loads from the
	// worktree's .opencode/plugins/ (kilo: .kilo/plugins/).
	MechOpencodePlugin Mechanism = "opencode-plugin"
	// MechPiExtension: an extension file in the state dir, passed with -e.
	MechPiExtension Mechanism = "pi-extension"
	// MechCodexHooks: codex's hooks engine (feature codex_hooks) and its
	// notify program, all set with -c on the launch line.
	MechCodexHooks Mechanism = "codex-hooks"
	// MechGeminiHooks: command hooks merged into the worktree's
	// .gemini/settings.json, the same matcher-group shape as claude's.
	MechGeminiHooks Mechanism = "gemini-hooks"
	// MechQwenHooks: command hooks merged into the worktree's
	// .qwen/settings.json: claude's event names, gemini's hook form.
	MechQwenHooks Mechanism = "qwen-hooks"
	// MechCopilotHooks: a hooks file of fmctl's own in the worktree's
	// .github/hooks/, which copilot loads for a trusted folder.
	MechCopilotHooks Mechanism = "copilot-hooks"
)

// MergesSettings says the mechanism's file is a settings file the user may
// own too, so fmctl merges its hooks in and retires only its own.
func (t Telemetry) MergesSettings() bool {
	return t.Mechanism == MechClaudeHooks || t.Mechanism == MechGeminiHooks || t.Mechanism == MechQwenHooks
}

// HookShell is the shell the mechanism's hook runner starts for a command
// hook: "bash" for gemini's and qwen's (bash -c, their
// getShellConfiguration) and copilot's (its hook entry names the command
// "bash"), "sh" for claude's (Node's spawn with shell: true, which is
// /bin/sh; read in its bundle) and codex's (sh -c); "" where the entry
// point is started in exec form (plugins, extensions, codex's notify).
// Under bash a hook reports without starting fm-control (Telemetry.Hook,
// codex's aside); /bin/sh is bash on some systems and dash on others.
func (t Telemetry) HookShell() string {
	switch t.Mechanism {
	case MechGeminiHooks, MechQwenHooks, MechCopilotHooks:
		return "bash"
	case MechClaudeHooks, MechCodexHooks:
		return "sh"
	}
	return ""
}

// Telemetry is one harness's native event wiring: which of its events map
// to which allowlisted fm-control agent-event name, and where it lives.
type Telemetry struct {
	Mechanism Mechanism `json:"mechanism"`
	// File is the wiring path (one of the harness's Wiring entries) the
	// mechanism is written to; "" when it rides the launch line only.
	File string `json:"file,omitempty"`
	// Events maps the harness's own event to the agent-event name.
	Events []EventMap `json:"events"`
	// ReportsPrompt says a prompt-submitted event exists, so an idle state
	// proves no turn runs; without it idle only means the last turn ended.
	ReportsPrompt bool `json:"reports_prompt"`
	// ReportsInterrupt says a turn cancelled by the interrupt key is
	// reported ended (seen on the real CLI); without it no report of the
	// cancel is waited for.
	ReportsInterrupt bool `json:"reports_interrupt"`
	// ReportsFailure says a turn whose model calls failed for good (the
	// CLI gave up retrying) is reported ended (seen in the tier's outage
	// group); without it the record's failed end decides a busy report.
	ReportsFailure bool   `json:"reports_failure"`
	Source         string `json:"source"`
}

// LeavesEndsUnreported says some turn ends reach no report (a cancel, a
// failure for good), so a busy report may stand after its turn is over and
// the agent's record's end outranks it.
func (t Telemetry) LeavesEndsUnreported() bool { return !t.ReportsInterrupt || !t.ReportsFailure }

// EventMap is one native event and the agent-event it reports.
type EventMap struct {
	Native  string `json:"native"`
	Matcher string `json:"matcher,omitempty"` // claude hooks only
	Event   string `json:"event"`
	// WaitingFor is what a "waiting" event says the agent waits for
	// (WaitPermission, ...), where the native event names one kind only.
	WaitingFor string `json:"waiting_for,omitempty"`
}

// WaitingFor is the one kind of dialog the wiring's waiting events report,
// or "" where they report several (claude's Notification covers a
// permission prompt and a question alike) or none.
func (t Telemetry) WaitingFor() string {
	kind := ""
	for _, e := range t.Events {
		if e.Event != "waiting" {
			continue
		}
		if e.WaitingFor == "" || (kind != "" && kind != e.WaitingFor) {
			return ""
		}
		kind = e.WaitingFor
	}
	return kind
}

// telemetry is per harness; a harness absent here has no wiring and its
// activity reads unknown.
var telemetry = map[string]Telemetry{
	"claude": {
		// 2.1.197 runs no Stop hook for a turn the user interrupts.
		Mechanism: MechClaudeHooks, File: "wt/.claude/settings.local.json", ReportsPrompt: true, ReportsFailure: true,
		Events: []EventMap{
			{Native: "SessionStart", Event: "session-start"},
			{Native: "UserPromptSubmit", Event: "prompt-submitted"},
			{Native: "Stop", Event: "turn-finished"},
			{Native: "StopFailure", Event: "turn-finished"},
			{Native: "Notification", Matcher: "permission_prompt|elicitation_dialog", Event: "waiting"},
			{Native: "SessionEnd", Event: "session-end"},
		},
		Source: "docs/harnesses.md#telemetry",
	},
	"opencode": {
		Mechanism: MechOpencodePlugin, File: "wt/.opencode/plugins/fm-busy-state.js", ReportsPrompt: true, ReportsInterrupt: true, ReportsFailure: true,
		Events: []EventMap{
			{Native: "plugin-init", Event: "session-start"},
			{Native: "session.status busy", Event: "prompt-submitted"},
			{Native: "session.status idle", Event: "turn-finished"},
			{Native: "permission.asked", Event: "waiting", WaitingFor: WaitPermission},
			{Native: "server.instance.disposed", Event: "session-end"},
		},
		Source: "docs/harnesses.md#telemetry",
	},
	"gemini": {
		// No Notification matcher: 0.61 fires it only for a tool
		// confirmation (ToolPermission) and matches no context against it.
		Mechanism: MechGeminiHooks, File: "wt/.gemini/settings.json", ReportsPrompt: true, ReportsInterrupt: true, ReportsFailure: true,
		Events: []EventMap{
			{Native: "SessionStart", Event: "session-start"},
			{Native: "BeforeAgent", Event: "prompt-submitted"},
			{Native: "AfterAgent", Event: "turn-finished"},
			{Native: "Notification", Event: "waiting", WaitingFor: WaitPermission},
			{Native: "SessionEnd", Event: "session-end"},
		},
		Source: "docs/harnesses.md#telemetry",
	},
	"qwen": {
		// 0.15.10 runs no Stop hook for a turn Escape cancels, but its
		// Notification "idle_prompt" fires each time the composer goes
		// idle, a cancel included. UserPromptSubmit also fires, with an
		// empty prompt, before each request that sends tool results back.
		Mechanism: MechQwenHooks, File: "wt/.qwen/settings.json", ReportsPrompt: true, ReportsInterrupt: true, ReportsFailure: true,
		Events: []EventMap{
			{Native: "SessionStart", Event: "session-start"},
			{Native: "UserPromptSubmit", Event: "prompt-submitted"},
			{Native: "Stop", Event: "turn-finished"},
			{Native: "StopFailure", Event: "turn-finished"},
			{Native: "Notification", Matcher: "idle_prompt", Event: "turn-finished"},
			{Native: "Notification", Matcher: "permission_prompt", Event: "waiting", WaitingFor: WaitPermission},
			{Native: "SessionEnd", Event: "session-end"},
		},
		Source: "docs/harnesses.md#telemetry",
	},
	"copilot": {
		// 1.0.102 runs no hook when a turn is cancelled (Ctrl+C, or
		// Escape at a permission dialog): its record's abort stands in.
		// sessionStart fires with the first prompt, not at launch. Nor
		// does agentStop fire for a turn whose model calls failed for
		// good: its record's session.error stands in.
		Mechanism: MechCopilotHooks, File: "wt/.github/hooks/fmctl-telemetry.json", ReportsPrompt: true,
		Events: []EventMap{
			{Native: "sessionStart", Event: "session-start"},
			{Native: "userPromptSubmitted", Event: "prompt-submitted"},
			{Native: "agentStop", Event: "turn-finished"},
			{Native: "permissionRequest", Event: "waiting", WaitingFor: WaitPermission},
			{Native: "sessionEnd", Event: "session-end"},
		},
		Source: "docs/harnesses.md#telemetry",
	},
	"pi":        piTelemetry,
	"pi-signed": piTelemetry,
	"codex": {
		Mechanism: MechCodexHooks, ReportsPrompt: true, ReportsInterrupt: true, ReportsFailure: true,
		Events: []EventMap{
			{Native: "SessionStart", Event: "session-start"},
			{Native: "UserPromptSubmit", Event: "prompt-submitted"},
			{Native: "Stop", Event: "turn-finished"},
			{Native: "Interrupt", Event: "turn-finished"},
			{Native: "notify", Event: "turn-finished"}, // agent-turn-complete
			{Native: "SessionEnd", Event: "session-end"},
		},
		Source: "docs/harnesses.md#telemetry",
	},
}

var piTelemetry = Telemetry{
	Mechanism: MechPiExtension, File: "state/<id>.pi-ext.ts", ReportsPrompt: true, ReportsInterrupt: true, ReportsFailure: true,
	Events: []EventMap{
		{Native: "session_start", Event: "session-start"},
		{Native: "agent_start", Event: "prompt-submitted"},
		{Native: "agent_end", Event: "turn-finished"},
		{Native: "session_shutdown", Event: "session-end"},
	},
	Source: "docs/harnesses.md#telemetry",
}

// kilo loads {plugin,plugins}/*.{js,ts} from .kilo/ (and the legacy
// .kilocode/), never from .opencode/ (the 7.7.7 binary's built-in config
// guide), and its plugin API and bus events are opencode's: the same plugin,
// in kilo's directory.
func init() {
	kilo := telemetry["opencode"]
	kilo.File = "wt/.kilo/plugins/fm-busy-state.js"
	telemetry["kilo"] = kilo
}

// Telemetry returns the harness's native event wiring, if it has one.
func (h Harness) Telemetry() (Telemetry, bool) {
	t, ok := telemetry[h.Name]
	return t, ok
}

// Hook is what one wired event runs: the fixed entry point with the task's
// home, id, event and generation. Argv is the exec form; Shell is the
// command for the harnesses that run theirs through a shell (claude, codex,
// gemini, qwen, copilot). Under bash, Shell writes the event into the
// task's events directory with builtins alone (state/agentevents.go): the
// hook then costs the agent its shell and one small file, not a process
// start. Where that cannot be done (another shell, no key, the file not
// created), `exec` lets the shell become fm-control rather than wait for
// it, so the hook costs one process start.
type Hook struct {
	Argv  []string
	Shell string
	// fast is Shell's builtin-only path, empty without an events directory.
	fast string
}

// TelemetryMarker ends every shell command fmctl wires, so a merged
// settings file's fmctl entries can be told from the user's own.
const TelemetryMarker = "# fmctl-telemetry"

// WiringTarget is the task an incarnation's wiring reports for.
type WiringTarget struct {
	FMControl string // absolute path of fm-control
	Home      string // FM_HOME
	StateDir  string // set when the state dir is not Home/state (FM_STATE_OVERRIDE)
	ID        string
	Gen       string // the record's spawn_gen this incarnation runs under
	// EventsDir is the task's events directory (state.Store.AgentEventsDir),
	// which a hook run through bash writes into without a process; empty,
	// every hook runs fm-control.
	EventsDir string
}

// HookFor builds the entry-point call for one agent-event. The home rides
// as flags (--home, --state-dir) rather than through `env`, which would
// be a second process start on every prompt; the id, event, --gen and gen
// stay last, where the JS wirings splice in the event.
func (w WiringTarget) HookFor(event string) Hook {
	argv := []string{w.FMControl, "agent-event", "--home", w.Home}
	if w.StateDir != "" {
		argv = append(argv, "--state-dir", w.StateDir)
	}
	argv = append(argv, w.ID, event, "--gen", w.Gen)
	h := Hook{Argv: argv, fast: w.builtinReport(event)}
	h.Shell = h.fast + "exec " + shellWords(argv) + " " + TelemetryMarker
	return h
}

// builtinReport is the shell text that reports event without a process:
// with bash's clock ($EPOCHREALTIME, bash 5) and the agent's event key at
// hand, printf writes the one line into a file the shell creates
// exclusively (set -C: never through a symlink, never over a file) and the
// hook ends there. It ends nothing when any of that fails (sh and zsh have
// no $EPOCHREALTIME), so what follows it (fm-control) reports instead.
func (w WiringTarget) builtinReport(event string) string {
	if w.EventsDir == "" {
		return ""
	}
	key := `"$` + EventKeyEnv + `"`
	return `t=$EPOCHREALTIME; set -C; [ -n "$t" ] && [ -n ` + key + ` ] && printf '%s %s %s %s\n' ` +
		QuoteIfNeeded(w.Gen) + " " + QuoteIfNeeded(event) + ` "$t" ` + key +
		` 2>/dev/null >` + QuoteIfNeeded(w.EventsDir) + `/"$t.$$" && exit 0; `
}

// Hook is the command the mechanism runs for event. Codex's hooks ride
// the launch line, which is typed into the pane, and run under sh, dash
// on the Debian family: the builtin report would lengthen the line by a
// kilobyte where it is rarely taken, so theirs start fm-control.
func (t Telemetry) Hook(w WiringTarget, event string) Hook {
	if t.Mechanism == MechCodexHooks {
		w.EventsDir = ""
	}
	return w.HookFor(event)
}

func shellWords(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = QuoteIfNeeded(a)
	}
	return strings.Join(words, " ")
}

// QuietShell is the command with its output discarded and its status
// always 0 or 1: gemini shows a hook's output as a message and reads any
// exit status but 0 and 1 (a missing fm-control is 127, a usage error 2) as
// a deny, which on BeforeAgent would block the user's prompt. The shell
// checks the program is there and then becomes it (`exec`), and --quiet
// makes agent-event itself exit 0 on anything it refuses, so the hook
// costs the agent one process start, as Shell does.
func (h Hook) QuietShell() string {
	argv := append([]string{h.Argv[0], h.Argv[1], "--quiet"}, h.Argv[2:]...)
	return h.fast + "[ -x " + QuoteIfNeeded(argv[0]) + " ] && exec " + shellWords(argv) + " >/dev/null 2>&1; exit 0 " + TelemetryMarker
}

// TelemetryArgs are the launch-line additions the mechanism needs: pi's
// extension flag, codex's notify program.
func (h Harness) TelemetryArgs(w WiringTarget, stateDir string) []string {
	t, ok := h.Telemetry()
	if !ok {
		return nil
	}
	switch t.Mechanism {
	case MechPiExtension:
		return []string{"-e", ExpandWiring(t.File, "", stateDir, w.ID)}
	case MechCodexHooks:
		return codexArgs(t, w)
	}
	return nil
}

// exitKeepsTurn names the harnesses whose exit command ends the TUI but not
// a running turn: codex 0.171's /quit says "Any running work continues" and
// its app-server daemon carries on with the turn (docs/harnesses.md).
var exitKeepsTurn = map[string]bool{"codex": true}

// ExitKeepsTurn reports whether a running turn survives the exit command.
func (h Harness) ExitKeepsTurn() bool { return exitKeepsTurn[h.Name] }

// codexTrustFlags are what codex 0.171 needs to run hooks given on the
// command line: the feature, and the trust bypass (without it, hooks from
// -c never ran on the real CLI; see docs/harnesses.md).
var codexTrustFlags = []string{"--dangerously-bypass-hook-trust", "-c", "features.codex_hooks=true"}

// codexArgs sets each hook as a -c override (a TOML inline array of matcher
// groups) and the notify program, whose JSON payload codex appends as the
// last argument (--notify-payload absorbs it).
func codexArgs(t Telemetry, w WiringTarget) []string {
	args := append([]string(nil), codexTrustFlags...)
	for _, e := range t.Events {
		if e.Native == "notify" {
			argv := append(t.Hook(w, e.Event).Argv, "--notify-payload")
			quoted := make([]string, len(argv))
			for i, a := range argv {
				quoted[i] = tomlString(a)
			}
			args = append(args, "-c", "notify=["+strings.Join(quoted, ",")+"]")
			continue
		}
		args = append(args, "-c", fmt.Sprintf(`hooks.%s=[{hooks=[{type="command",command=%s}]}]`, e.Native, tomlString(t.Hook(w, e.Event).Shell)))
	}
	return args
}

// tomlString quotes s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// WorktreeWiring lists, relative to a worktree, every file any harness's
// wiring puts there: fmctl's own, so a worktree holding only these is as
// clean as its user left it.
func WorktreeWiring() map[string]bool {
	out := map[string]bool{}
	for _, h := range harnesses {
		for _, w := range h.Wiring {
			if rel, ok := strings.CutPrefix(w, "wt/"); ok {
				out[rel] = true
			}
		}
	}
	return out
}
