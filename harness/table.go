// Package harness is the capability table: the single owner of the verb
// allowlist, each harness's control and launch mechanics, and each backend's
// abilities. It is plain data with no side effects, so a test and a human can
// read it as a contract; the binaries print it with `capabilities --json`.
package harness

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Kind is a task kind.
type Kind string

const (
	KindShip       Kind = "ship"
	KindScout      Kind = "scout"
	KindSecondmate Kind = "secondmate"
)

// Kinds lists every task kind.
var Kinds = []Kind{KindShip, KindScout, KindSecondmate}

// KindNames returns every task kind's name, in table order.
func KindNames() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = string(k)
	}
	return out
}

// RelaunchNeedsNote reports whether a relaunch of a task of kind k must be
// told where the work stands (fm-control relaunch --note): a ship or scout
// re-reads its brief, to which the note is appended, while a secondmate is
// pointed at its charter, which is never rewritten.
func (k Kind) RelaunchNeedsNote() bool { return k == KindShip || k == KindScout }

// ParseKind maps a recorded kind to a Kind; an empty value is a ship.
func ParseKind(s string) (Kind, bool) {
	if s == "" {
		return KindShip, true
	}
	for _, k := range Kinds {
		if string(k) == s {
			return k, true
		}
	}
	return "", false
}

// Efforts are the reasoning-effort levels a task may record, lowest first.
var Efforts = []string{"low", "medium", "high", "xhigh", "max"}

// ValidEffort reports whether s is one of Efforts.
func ValidEffort(s string) bool {
	for _, e := range Efforts {
		if e == s {
			return true
		}
	}
	return false
}

// AckSource names the adapter-owned signal that can confirm an interrupt
// cancelled the running turn.
type AckSource string

const (
	AckNone                AckSource = "none"
	AckMuseSessionTerminal AckSource = "muse-session-terminal"
)

// PointerFile is the file in the state dir through which the harness names
// the log this ack source reads (muse writes its session log's path to
// state/<id>.muse-session, one of its Wiring files); "" for none.
func (a AckSource) PointerFile(id string) string {
	if a == AckMuseSessionTerminal {
		return id + ".muse-session"
	}
	return ""
}

// PromptVia says how the launch delivers the brief pointer to the agent.
type PromptVia string

const (
	// PromptArgument: the prompt rides the launch command as an argument.
	PromptArgument PromptVia = "argument"
	// PromptComposer: the agent starts first, then the prompt is submitted
	// through its composer (kimi has no prompt argument that keeps its TUI).
	PromptComposer PromptVia = "composer"
)

// Launch describes how to start a harness in a pane's shell.
type Launch struct {
	Env    []string `json:"env,omitempty"`   // NAME=value assignments put before the binary
	Unset  []string `json:"unset,omitempty"` // variables removed with env -u, so a nested agent does not inherit its parent's identity
	Binary string   `json:"binary"`          // executable name looked up on the pane's PATH
	Args   []string `json:"args,omitempty"`  // fixed arguments, in every permission mode
	// Auto and Ask are what each permission mode adds after Env and Args
	// (PermissionMode): auto approves every tool call, as fmctl always
	// launched; ask leaves the harness's own permission dialogs up. A
	// harness with no verified Ask refuses a launch in ask mode.
	Auto       ModeLaunch        `json:"auto"`
	Ask        *ModeLaunch       `json:"ask,omitempty"`
	ModelFlag  string            `json:"model_flag,omitempty"`  // flag that takes the model; "" = the harness has none
	EffortFlag string            `json:"effort_flag,omitempty"` // flag or -c key that takes the effort
	EffortForm string            `json:"effort_form,omitempty"` // "flag" (--x value) or "codex-config" (-c key="value")
	EffortMap  map[string]string `json:"effort_map,omitempty"`  // fmctl level -> harness value; a level absent here is omitted
	Workspace  string            `json:"workspace_flag,omitempty"`
	PromptFlag string            `json:"prompt_flag,omitempty"` // flag before the prompt; "" = positional
	PromptVia  PromptVia         `json:"prompt_via"`
	Source     string            `json:"source"` // where the flags were verified
}

// ModeLaunch is what one permission mode adds to a launch line.
type ModeLaunch struct {
	Env  []string `json:"env,omitempty"`
	Args []string `json:"args,omitempty"`
	// None says the harness has no permission dialog in any mode (pi runs
	// every tool call), so ask has nothing to ask and is refused.
	None string `json:"none,omitempty"`
}

// PermissionMode is how a launched agent treats its tool calls.
type PermissionMode string

const (
	// PermAuto: every tool call runs unasked (the harness's auto/yolo
	// mode); the default, and what a record without a mode ran.
	PermAuto PermissionMode = "auto"
	// PermAsk: the harness's own default, a permission dialog per tool
	// call it does not trust, which the agent then waits at.
	PermAsk PermissionMode = "ask"
)

// PermissionModes lists the modes, default first.
func PermissionModes() []string { return []string{string(PermAuto), string(PermAsk)} }

// ParsePermissionMode maps a recorded or given mode; "" is auto.
func ParsePermissionMode(s string) (PermissionMode, bool) {
	switch PermissionMode(s) {
	case "", PermAuto:
		return PermAuto, true
	case PermAsk:
		return PermAsk, true
	}
	return "", false
}

// Mode returns what mode m adds to the launch line, or an error naming
// why the harness cannot launch in it.
func (h Harness) Mode(m PermissionMode) (ModeLaunch, error) {
	if m == "" || m == PermAuto {
		return h.Launch.Auto, nil
	}
	if h.Launch.Ask == nil {
		return ModeLaunch{}, fmt.Errorf("harness %s has no verified permission mode 'ask'; launch it with --permissions auto", h.Name)
	}
	if h.Launch.Ask.None != "" {
		return ModeLaunch{}, fmt.Errorf("harness %s has no permission dialog to ask with (%s); launch it with --permissions auto", h.Name, h.Launch.Ask.None)
	}
	return *h.Launch.Ask, nil
}

// Harness is one verified adapter's mechanics.
type Harness struct {
	Name         string `json:"name"`
	InterruptKey Key    `json:"interrupt_key"`
	Repeat       int    `json:"interrupt_repeat"`
	// Rounds is the most times one interrupt sends its whole key sequence
	// (Repeat presses, then ClearKey) while the agent's own record still
	// shows the turn running: opencode right after a submit and claude in
	// its retry back-off let a first Escape pass. A harness whose record
	// fmctl cannot read, or whose interrupt key at an idle agent quits or
	// arms an exit, gets 1: nothing would tell a repeat from a key too many.
	Rounds      int           `json:"interrupt_rounds"`
	PressGap    time.Duration `json:"-"`
	ClearKey    Key           `json:"clear_key,omitempty"` // pressed after the interrupt so the composer is empty
	Ack         AckSource     `json:"ack_source"`
	ExitCommand string        `json:"exit_command"`
	Kinds       []Kind        `json:"kinds"`
	Launch      Launch        `json:"launch"`
	// Wiring lists the per-task files an incarnation leaves behind, relative
	// to the worktree ("wt/...") or the state dir ("state/<id>...").
	Wiring []string `json:"wiring,omitempty"`
	// ArgvScript: the harness runs as an interpreter (node) whose argv names
	// this script, never under its own process name (gemini's comm and
	// pane_current_command are "node"). Only such an argv attributes it, so
	// no other node process counts as an agent.
	ArgvScript string `json:"argv_script,omitempty"`
	// Daemon is a process the agent starts that outlives it by design,
	// shared by every agent of the harness under the same HOME (cline's
	// hub runs the later TUIs' sessions): exit never kills it, and says it
	// is left when the task's agent started it.
	Daemon *Daemon `json:"daemon,omitempty"`
	// SkillPrefix opens the harness's skill popup as "/" opens every
	// harness's command popup (codex's $skill); see OpensPopup.
	SkillPrefix string `json:"skill_prefix,omitempty"`
	// Verified is the releases of the CLI the real-agent tier (tests/agents)
	// ran every scenario against; nil where no real CLI could be run here.
	Verified *Release `json:"verified,omitempty"`
}

// Daemon names a process the harness starts that outlives its agent.
type Daemon struct {
	Name   string `json:"name"`   // what fmctl calls it in its output
	Arg    string `json:"arg"`    // an argument only its command line carries
	Source string `json:"source"` // where this was observed
}

// Release is the published versions of a harness's CLI the real-agent tier
// passed on.
type Release struct {
	Package string `json:"package"` // the npm package the CLI installs from
	// Version is the release CI's tier runs (pinned in tests/agents/npm).
	Version string `json:"version"`
	// Oldest and Newest bound the releases the whole tier passed on (make
	// test-agents AGENTS=oldest and AGENTS=latest); empty is Version.
	Oldest string `json:"oldest,omitempty"`
	Newest string `json:"newest,omitempty"`
}

// Range is the releases the tier passed on, oldest..newest, or the one
// version where it ran on one.
func (r Release) Range() string {
	oldest, newest := r.Oldest, r.Newest
	if oldest == "" {
		oldest = r.Version
	}
	if newest == "" {
		newest = r.Version
	}
	if oldest == newest {
		return oldest
	}
	return oldest + ".." + newest
}

// OpensPopup reports whether typing text opens a completion popup the
// submit must wait out: a slash command anywhere, a skill where the
// harness has them. The zero Harness (unverified) knows only the slash.
func (h Harness) OpensPopup(text string) bool {
	return strings.HasPrefix(text, "/") || (h.SkillPrefix != "" && strings.HasPrefix(text, h.SkillPrefix))
}

// SupportsKind reports whether the harness is verified to run a task of kind k.
func (h Harness) SupportsKind(k Kind) bool {
	for _, x := range h.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// pressGap separates repeated interrupt presses: opencode reads two Escapes
// arriving in one burst as a single escape sequence, so each press must be its
// own input event.
const pressGap = 200 * time.Millisecond

var allKinds = []Kind{KindShip, KindScout, KindSecondmate}

// The brief never rides the command line itself (it can be many kilobytes and
// full of quotes); every harness gets a one-line pointer to the brief file.
var harnesses = []Harness{
	{
		Name: "claude", InterruptKey: KeyEscape, Repeat: 1, Rounds: 3, Ack: AckNone, ExitCommand: "/exit", Kinds: allKinds,
		Launch: Launch{
			Env:    []string{"CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION=false"},
			Binary: "claude", Auto: ModeLaunch{Args: []string{"--dangerously-skip-permissions"}},
			Ask:       &ModeLaunch{Args: []string{"--permission-mode", "default"}},
			ModelFlag: "--model", EffortFlag: "--effort", EffortForm: "flag",
			EffortMap: identity("low", "medium", "high", "xhigh", "max"),
			PromptVia: PromptArgument, Source: "docs/harnesses.md#claude",
		},
		Wiring:   []string{"wt/.claude/settings.local.json"},
		Verified: &Release{Package: "@anthropic-ai/claude-code", Version: "2.1.197", Oldest: "2.1.126", Newest: "2.1.332"},
	},
	{
		Name: "codex", InterruptKey: KeyEscape, Repeat: 1, Rounds: 2, Ack: AckNone, ExitCommand: "/quit", Kinds: allKinds,
		Launch: Launch{
			Binary: "codex", Auto: ModeLaunch{Args: []string{"--dangerously-bypass-approvals-and-sandbox"}},
			Ask:       &ModeLaunch{Args: []string{"--ask-for-approval", "on-request"}},
			ModelFlag: "-m", EffortFlag: "model_reasoning_effort", EffortForm: "codex-config",
			EffortMap: identity("low", "medium", "high", "xhigh"),
			PromptVia: PromptArgument, Source: "docs/harnesses.md#codex",
		},
		SkillPrefix: "$",
		Verified:    &Release{Package: "@openai/codex", Version: "0.171.0"},
	},
	{
		// opencode's first Escape arms the cancel and the second performs it.
		Name: "opencode", InterruptKey: KeyEscape, Repeat: 2, Rounds: 3, Ack: AckNone, ExitCommand: "/exit", Kinds: allKinds,
		Launch: Launch{
			Auto:   ModeLaunch{Env: []string{`OPENCODE_CONFIG_CONTENT={"permission":{"*":"allow"}}`}},
			Ask:    &ModeLaunch{Env: []string{`OPENCODE_CONFIG_CONTENT={"permission":{"*":"ask"}}`}},
			Binary: "opencode", ModelFlag: "--model", PromptFlag: "--prompt",
			PromptVia: PromptArgument, Source: "docs/harnesses.md#opencode",
		},
		Wiring:   []string{"wt/.opencode/plugins/fm-busy-state.js"},
		Verified: &Release{Package: "opencode-ai", Version: "1.18.33"},
	},
	{
		// kilo (@kilocode/cli) is an opencode fork with opencode's keys:
		// the first Escape arms the cancel and the second performs it.
		// KILO_CONFIG_CONTENT is its OPENCODE_CONFIG_CONTENT (the 7.7.7
		// binary's built-in config guide: "high precedence, after project
		// dirs"); kilo's --auto would allow only what is not denied.
		Name: "kilo", InterruptKey: KeyEscape, Repeat: 2, Rounds: 3, Ack: AckNone, ExitCommand: "/exit", Kinds: allKinds,
		Launch: Launch{
			Auto:   ModeLaunch{Env: []string{`KILO_CONFIG_CONTENT={"permission":{"*":"allow"}}`}},
			Ask:    &ModeLaunch{Env: []string{`KILO_CONFIG_CONTENT={"permission":{"*":"ask"}}`}},
			Binary: "kilo", ModelFlag: "--model", PromptFlag: "--prompt",
			PromptVia: PromptArgument, Source: "docs/harnesses.md#kilo",
		},
		Wiring:   []string{"wt/.kilo/plugins/fm-busy-state.js"},
		Verified: &Release{Package: "@kilocode/cli", Version: "7.7.7"},
	},
	{
		Name: "pi", InterruptKey: KeyEscape, Repeat: 1, Rounds: 3, Ack: AckNone, ExitCommand: "/quit", Kinds: allKinds,
		Launch: Launch{
			Env: []string{"FM_PI_HARNESS=pi"}, Binary: "pi",
			Ask:       &ModeLaunch{None: "pi runs every tool call it makes; it has no permission system"},
			ModelFlag: "--model", EffortFlag: "--thinking", EffortForm: "flag",
			EffortMap: identity("low", "medium", "high", "xhigh", "max"),
			PromptVia: PromptArgument, Source: "docs/harnesses.md#pi",
		},
		Wiring:   []string{"state/<id>.pi-ext.ts"},
		Verified: &Release{Package: "@mariozechner/pi-coding-agent", Version: "0.73.1", Oldest: "0.50.3"},
	},
	{
		// gemini stores text typed at its API-key dialog as the key, so its
		// /quit is typed only at a drawn, idle composer (see Screen). No
		// secondmate: it has no wake/supervision protocol (docs/harnesses.md).
		Name: "gemini", InterruptKey: KeyEscape, Repeat: 1, Rounds: 3, Ack: AckNone, ExitCommand: "/quit", Kinds: []Kind{KindShip, KindScout},
		Launch: Launch{
			// A fresh worktree is otherwise refused at a trust dialog;
			// --skip-trust would leave the project's hooks unloaded.
			Env:    []string{"GEMINI_CLI_TRUST_WORKSPACE=true"},
			Binary: "gemini", Auto: ModeLaunch{Args: []string{"--approval-mode=yolo"}},
			Ask: &ModeLaunch{Args: []string{"--approval-mode=default"}}, ModelFlag: "--model",
			PromptFlag: "-i", PromptVia: PromptArgument, Source: "docs/harnesses.md#gemini",
		},
		Wiring:     []string{"wt/.gemini/settings.json"},
		ArgvScript: "gemini",
		Verified:   &Release{Package: "@google/gemini-cli", Version: "0.61.0", Oldest: "0.52.0"},
	},
	{
		// qwen-code, a gemini-cli fork: its Escape cancels and leaves the
		// composer empty, and node runs it as a script, as gemini. No
		// secondmate, for gemini's reason (docs/harnesses.md#qwen).
		Name: "qwen", InterruptKey: KeyEscape, Repeat: 1, Rounds: 3, Ack: AckNone, ExitCommand: "/quit", Kinds: []Kind{KindShip, KindScout},
		Launch: Launch{
			// The default is ask; --approval-mode names either mode
			// outright, whatever the user's settings say.
			Binary: "qwen", Auto: ModeLaunch{Args: []string{"--approval-mode=yolo"}},
			Ask: &ModeLaunch{Args: []string{"--approval-mode=default"}}, ModelFlag: "--model",
			PromptFlag: "-i", PromptVia: PromptArgument, Source: "docs/harnesses.md#qwen",
		},
		Wiring:     []string{"wt/.qwen/settings.json"},
		ArgvScript: "qwen",
		Verified:   &Release{Package: "@qwen-code/qwen-code", Version: "0.15.10"},
	},
	{
		// copilot's Escape twice cancels only once an answer streams;
		// before that it takes the prompt back out of the record into the
		// composer ("esc esc edit prompt"), so Ctrl+C, which cancels in
		// both and keeps the prompt recorded, is its interrupt. Ctrl+C at
		// an idle composer arms an exit, so one round. No secondmate, for
		// gemini's reason (docs/harnesses.md#copilot).
		Name: "copilot", InterruptKey: KeyCtrlC, Repeat: 1, Rounds: 1, Ack: AckNone, ExitCommand: "/exit", Kinds: []Kind{KindShip, KindScout},
		Launch: Launch{
			// COPILOT_ALLOW_ALL=true trusts the worktree without its
			// folder-trust dialog (and loads its hooks); --yolo approves
			// every tool call. Ask is its default, manual approval (no flag
			// names it), and shows the trust dialog for a folder not yet
			// trusted.
			Binary: "copilot",
			Auto:   ModeLaunch{Env: []string{"COPILOT_ALLOW_ALL=true"}, Args: []string{"--yolo"}},
			Ask:    &ModeLaunch{}, ModelFlag: "--model",
			EffortFlag: "--reasoning-effort", EffortForm: "flag",
			EffortMap:  identity("low", "medium", "high", "xhigh", "max"),
			PromptFlag: "-i", PromptVia: PromptArgument, Source: "docs/harnesses.md#copilot",
		},
		Wiring:     []string{"wt/.github/hooks/fmctl-telemetry.json"},
		ArgvScript: "copilot",
		Verified:   &Release{Package: "@github/copilot", Version: "1.0.102"},
	},
	{
		// cline 3.0.65: one Escape cancels the turn and leaves the composer
		// empty; its launcher and the compiled binary it runs are named
		// cline or .cline (harness/process.go). No secondmate, for
		// gemini's reason (docs/harnesses.md#cline).
		Name: "cline", InterruptKey: KeyEscape, Repeat: 1, Rounds: 3, Ack: AckNone, ExitCommand: "/exit", Kinds: []Kind{KindShip, KindScout},
		Launch: Launch{
			// Without --tui a prompt argument runs headless; auto-approve
			// is named outright in both modes, whatever the user's
			// settings say.
			// Its log on at info, where a session the TUI runs itself
			// stamps each prompt it takes (records.SubmitLogger; one the
			// hub runs is read from the hub's event log); CLINE_LOG_PATH
			// empty is its default, ~/.cline/data/logs/cline.log.
			Env:    []string{"CLINE_LOG_ENABLED=true", "CLINE_LOG_LEVEL=info", "CLINE_LOG_PATH="},
			Binary: "cline", Args: []string{"--tui"},
			Auto: ModeLaunch{Args: []string{"--auto-approve", "true"}},
			Ask:  &ModeLaunch{Args: []string{"--auto-approve", "false"}}, ModelFlag: "--model",
			EffortFlag: "--thinking", EffortForm: "flag", EffortMap: identity("low", "medium", "high", "xhigh"),
			PromptVia: PromptArgument, Source: "docs/harnesses.md#cline",
		},
		Daemon:   &Daemon{Name: "hub", Arg: "--cline-hub-daemon", Source: "tests/captures/notes-cline.md (the hub daemon)"},
		Verified: &Release{Package: "cline", Version: "3.0.65"},
	},
	{
		Name: "pi-signed", InterruptKey: KeyEscape, Repeat: 1, Rounds: 1, Ack: AckNone, ExitCommand: "/quit", Kinds: allKinds,
		Launch: Launch{
			Env: []string{"FM_PI_HARNESS=pi-signed"}, Binary: "pi-signed",
			Ask:       &ModeLaunch{None: "pi runs every tool call it makes; it has no permission system"},
			ModelFlag: "--model", EffortFlag: "--thinking", EffortForm: "flag",
			EffortMap: identity("low", "medium", "high", "xhigh", "max"),
			PromptVia: PromptArgument, Source: "docs/harnesses.md#pi",
		},
		Wiring: []string{"state/<id>.pi-ext.ts"},
	},
	{
		// grok ignores Escape mid-turn; Ctrl+C is its cancel.
		Name: "grok", InterruptKey: KeyCtrlC, Repeat: 1, Rounds: 1, Ack: AckNone, ExitCommand: "/exit", Kinds: allKinds,
		Launch: Launch{
			Binary: "grok", Auto: ModeLaunch{Args: []string{"--always-approve"}},
			ModelFlag: "--model", EffortFlag: "--reasoning-effort", EffortForm: "flag",
			EffortMap: identity("low", "medium", "high"),
			PromptVia: PromptArgument, Source: "docs/harnesses.md#grok",
		},
		Wiring: []string{"wt/.fm-grok-turnend", "state/<id>.grok-turnend-token"},
	},
	{
		Name: "kimi", InterruptKey: KeyEscape, Repeat: 1, Rounds: 1, Ack: AckNone, ExitCommand: "/exit", Kinds: allKinds,
		Launch: Launch{
			Binary: "kimi", Auto: ModeLaunch{Args: []string{"--auto"}}, ModelFlag: "--model",
			PromptVia: PromptComposer, Source: "docs/harnesses.md#kimi",
		},
		Wiring: []string{"wt/.fm-kimi-turnend", "state/<id>.kimi-turnend-token"},
	},
	{
		Name: "cursor", InterruptKey: KeyEscape, Repeat: 1, Rounds: 1, Ack: AckNone, ExitCommand: "/exit", Kinds: allKinds,
		Launch: Launch{
			Unset:  []string{"CLAUDECODE", "PI_CODING_AGENT", "GROK_AGENT", "FM_PI_HARNESS", "CURSOR_INVOKED_AS"},
			Binary: "cursor-agent", Args: []string{"--trust"}, Auto: ModeLaunch{Args: []string{"--yolo"}}, ModelFlag: "--model",
			Workspace: "--workspace", PromptVia: PromptArgument, Source: "docs/harnesses.md#cursor",
		},
		Wiring: []string{"state/<id>.cursor-session"},
	},
	{
		Name: "agy", InterruptKey: KeyEscape, Repeat: 1, Rounds: 1, Ack: AckNone, ExitCommand: "/exit", Kinds: allKinds,
		Launch: Launch{
			Unset:  []string{"CLAUDECODE", "PI_CODING_AGENT", "GROK_AGENT", "FM_PI_HARNESS"},
			Binary: "agy", Auto: ModeLaunch{Args: []string{"--dangerously-skip-permissions"}}, ModelFlag: "--model",
			Workspace: "--add-dir", PromptFlag: "-i", PromptVia: PromptArgument, Source: "docs/harnesses.md#agy",
		},
		Wiring: []string{"wt/.fm-agy-turnend", "state/<id>.agy-turnend-token", "state/<id>.agy-session"},
	},
	{
		// muse restores a cancelled prompt into its composer as real text, so
		// without Ctrl+U the next submitted line would be glued onto it.
		Name: "muse", InterruptKey: KeyEscape, Repeat: 1, Rounds: 1, ClearKey: KeyCtrlU, Ack: AckMuseSessionTerminal,
		ExitCommand: "/exit", Kinds: []Kind{KindShip, KindScout},
		Launch: Launch{
			Unset:  []string{"CLAUDECODE", "PI_CODING_AGENT", "GROK_AGENT", "FM_PI_HARNESS"},
			Binary: "muse", Auto: ModeLaunch{Args: []string{"--yolo"}},
			ModelFlag: "--model", EffortFlag: "--reasoning-effort", EffortForm: "flag",
			EffortMap: map[string]string{"low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "ultra"},
			PromptVia: PromptArgument, Source: "docs/harnesses.md#muse",
		},
		Wiring: []string{"state/<id>.muse-session", "state/<id>.muse-session-current"},
	},
}

func identity(levels ...string) map[string]string {
	m := make(map[string]string, len(levels))
	for _, l := range levels {
		m[l] = l
	}
	return m
}

func init() {
	for i := range harnesses {
		harnesses[i].PressGap = pressGap
	}
}

// Harnesses returns every verified harness, in table order.
func Harnesses() []Harness {
	return append([]Harness(nil), harnesses...)
}

// Names returns the verified harness names, in table order.
func Names() []string {
	out := make([]string, len(harnesses))
	for i, h := range harnesses {
		out[i] = h.Name
	}
	return out
}

// Lookup returns the verified harness with exactly this name.
func Lookup(name string) (Harness, bool) {
	for _, h := range harnesses {
		if h.Name == name {
			return h, true
		}
	}
	return Harness{}, false
}

// exactFamilies resolve only by their exact name: "pi-launcher" is not pi and
// "pi-signed" is its own adapter, so no prefix rule may reach them.
var exactFamilies = map[string]bool{"pi": true, "pi-signed": true}

// Family resolves a recorded harness value (an adapter name, or the basename
// of a raw launch command such as "grok-2") to its verified adapter. An
// unrecognised value resolves to nothing: a harness is never guessed.
func Family(recorded string) (Harness, bool) {
	if recorded == "" {
		return Harness{}, false
	}
	if exactFamilies[recorded] {
		return Lookup(recorded)
	}
	for _, h := range harnesses {
		if exactFamilies[h.Name] {
			continue
		}
		if strings.HasPrefix(recorded, h.Name) {
			return h, true
		}
	}
	return Harness{}, false
}

// Verb is one entry of the control plane's closed allowlist.
type Verb struct {
	Name          string `json:"name"`
	Purpose       string `json:"purpose"`
	Postcondition string `json:"postcondition"`
	Lifecycle     bool   `json:"lifecycle"`        // takes the per-task lock and acts on the agent
	NeedsVerified bool   `json:"needs_classifier"` // refused on a backend without a recovery-grade classifier
}

var verbs = []Verb{
	{Name: "interrupt", Lifecycle: true,
		Purpose:       "cancel the agent's running turn and leave it running",
		Postcondition: "the endpoint exists and, where the backend classifies agents, the agent is still alive; cancel=confirmed only from the agent's own record showing the turn end (proof=record; the keys go again while it still shows the turn, up to the harness's rounds, and a turn still running after FM_CONTROL_CANCEL_WAIT is exit 3), an adapter-owned acknowledgement (proof=ack) or the agent's own turn-end report after the keys (proof=telemetry); cancel=no-turn where the agent's own word (its record, its idle report, muse's log) is that no turn ran, never while its screen draws a retry back-off its record does not hold (pi: exit 3 with retry=gone|drawn); cancel=unconfirmed, nothing proved either, is exit 3"},
	{Name: "exit", Lifecycle: true, NeedsVerified: true,
		Purpose:       "stop the agent, keeping its endpoint, worktree and every uncommitted change",
		Postcondition: "the backend's recovery-grade classifier reports the agent gone (and, for a harness whose turn outlives its exit command, the agent reported the turn over); already-stopped is success"},
	{Name: "relaunch", Lifecycle: true, NeedsVerified: true,
		Purpose:       "replace the agent with a new one in the same endpoint and worktree",
		Postcondition: "a new agent is alive at the recorded endpoint and the record names the harness that runs"},
	{Name: "rebind", Lifecycle: true, NeedsVerified: true,
		Purpose:       "re-point a drifted record (window renamed or moved) at the pane that is provably the task's",
		Postcondition: "the record names the one pane carrying the task's label or recorded pane id, in the recorded worktree, running the recorded harness or nothing; a record that already resolves is unchanged"},
	{Name: "list",
		Purpose:       "one line per task in the home: harness, kind, backend, endpoint, agent state, activity, journal phase (read-only)",
		Postcondition: "nothing is locked or written; a record that cannot be read is listed with its error"},
	{Name: "wait",
		Purpose:       "wait until a task's agent is ready, busy, idle, waiting or dead, or a message fm-send left unconfirmed is submitted (read-only)",
		Postcondition: "exit 0 only once the condition was observed and, for all but dead, the task's own agent was alive; submitted only once the agent's own record holds the message exactly once more than before its send (twice is exit 3); a stopped (suspended), unreadable, unattributed, drifted or gone endpoint ends the wait at once with exit 1; exit 4 when the timeout passed first, exit 5 when a busy agent stalled (FM_STALL_AFTER) first; nothing is locked or written"},
	{Name: "read",
		Purpose:       "print a pane's recent text with every terminal control sequence stripped (read-only)",
		Postcondition: "the text printed holds no control character but newline and tab; nothing is locked, written or typed"},
}

// Verbs returns the control plane's allowlist: the lifecycle verbs, then
// the read-only ones (Lifecycle false: no lock, nothing written).
func Verbs() []Verb { return append([]Verb(nil), verbs...) }

// LookupVerb returns the allowlisted verb with this name.
func LookupVerb(name string) (Verb, bool) {
	for _, v := range verbs {
		if v.Name == name {
			return v, true
		}
	}
	return Verb{}, false
}

// Backend is one backend's declared abilities. They come from each adapter's
// real surface, not from policy.
type Backend struct {
	Name string `json:"name"`
	Keys []Key  `json:"keys"`
	// Classifier: the backend can prove an agent stopped (recovery-grade
	// agent-state classifier), which exit and relaunch require.
	Classifier bool `json:"recovery_grade_classifier"`
	// Adapter: this project ships an adapter for it.
	Adapter bool `json:"adapter"`
}

// CanDeliver reports whether the backend can deliver key k.
func (b Backend) CanDeliver(k Key) bool {
	for _, x := range b.Keys {
		if x == k {
			return true
		}
	}
	return false
}

// The backend names, as a record's backend= and fm-spawn --backend spell
// them. Code outside this table and backends/ names a backend only through
// these (tests/literals enforces it).
const (
	BackendTmux   = "tmux"
	BackendHerdr  = "herdr"
	BackendZellij = "zellij"
	BackendCmux   = "cmux"
	BackendOrca   = "orca"
)

var backendRows = []Backend{
	// End is verified on tmux only (send-keys End); herdr's and zellij's
	// key names for it are not, so a clear that needs it is refused there.
	{Name: BackendTmux, Keys: append(append([]Key(nil), NamedKeys...), KeyEnd), Classifier: true, Adapter: true},
	{Name: BackendHerdr, Keys: NamedKeys, Classifier: true, Adapter: true},
	{Name: BackendZellij, Keys: NamedKeys, Classifier: false, Adapter: true},
	{Name: BackendCmux, Keys: NamedKeys, Classifier: false},
	// orca's terminal API exposes only an interrupt and an Enter.
	{Name: BackendOrca, Keys: []Key{KeyEnter, KeyCtrlC}, Classifier: false},
}

// Backends returns every known backend row.
func Backends() []Backend { return append([]Backend(nil), backendRows...) }

// LookupBackend returns the row for a backend; an unknown backend has no
// keys and no classifier.
func LookupBackend(name string) (Backend, bool) {
	for _, b := range backendRows {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{Name: name}, false
}

// BackendNames returns the known backend names, sorted.
func BackendNames() []string {
	out := make([]string, 0, len(backendRows))
	for _, b := range backendRows {
		out = append(out, b.Name)
	}
	sort.Strings(out)
	return out
}

// AdapterBackendNames returns the backends fmctl ships an adapter for, in
// table order: the values fm-spawn --backend accepts.
func AdapterBackendNames() []string {
	var out []string
	for _, b := range backendRows {
		if b.Adapter {
			out = append(out, b.Name)
		}
	}
	return out
}
