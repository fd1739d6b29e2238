package harness

import (
	"fmt"
	"strings"
)

// LaunchParams are the per-task values a launch line is built from.
type LaunchParams struct {
	Model    string // "" or "default" = the harness's own default
	Effort   string // "" or "default"; one of Efforts otherwise
	Worktree string
	Brief    string // absolute path of the instructions file
	// Binary overrides the table's executable (config/fm.toml).
	Binary string
	// ExtraArgs are appended before the prompt (config/fm.toml).
	ExtraArgs []string
	// Home is a secondmate's own FM_HOME, set on its launch line (with the
	// parent's state/data/config overrides cleared) so it never acts on
	// the parent's records.
	Home string
	// TelemetryArgs wire the agent's own events (TelemetryArgs).
	TelemetryArgs []string
	// EventKeyFile is the incarnation's event key (state/<id>.event-key):
	// the pane's shell reads it into EventKeyEnv as it starts the agent, so
	// the key is neither typed on screen nor in the shell's history, and
	// the agent's hooks inherit it.
	EventKeyFile string
	// Permissions is the task's permission mode ("" = auto).
	Permissions PermissionMode
}

// EventKeyEnv is the variable an agent's hooks present its event key in
// (fm-control agent-event refuses an event without it).
const EventKeyEnv = "FM_EVENT_KEY"

// homeOverrides are the variables that would point a secondmate at its
// parent's directories instead of its own home's.
var homeOverrides = []string{"FM_STATE_OVERRIDE", "FM_DATA_OVERRIDE", "FM_CONFIG_OVERRIDE"}

// ValidModel reports whether a model name is safe to put on a command line:
// model ids are plain tokens (claude-opus-4, openai/gpt-5, gemini-2.5-pro@x).
func ValidModel(m string) bool {
	if m == "" || len(m) > 128 {
		return false
	}
	for _, c := range []byte(m) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("._:/@+-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// BriefPrompt is the one line every launch hands the agent: a pointer to the
// brief on disk, which is the durable instruction (a relaunch appends its
// progress note there).
func BriefPrompt(brief string) string {
	return fmt.Sprintf("Read the brief at %s and follow it exactly.", brief)
}

// Executable is the program a launch line runs: config/fm.toml's pin, else
// the table's binary.
func (h Harness) Executable(p LaunchParams) string {
	if p.Binary != "" {
		return p.Binary
	}
	return h.Launch.Binary
}

// LaunchLine builds the shell line typed into the endpoint's shell. Every
// variable part is single-quoted, so nothing from a record or an argument is
// ever interpreted by that shell.
func (h Harness) LaunchLine(p LaunchParams) (string, error) {
	l := h.Launch
	mode, err := h.Mode(p.Permissions)
	if err != nil {
		return "", err
	}
	var words []string
	// First, so it reaches the agent through env -u as well: the shell
	// exports a command's leading assignments to it.
	if p.EventKeyFile != "" {
		words = append(words, EventKeyEnv+`="$(cat `+Quote(p.EventKeyFile)+`)"`)
	}
	if len(l.Unset) > 0 {
		words = append(words, "env")
		for _, v := range l.Unset {
			words = append(words, "-u", v)
		}
	}
	if p.Home != "" {
		for _, v := range homeOverrides {
			words = append(words, v+"=")
		}
		words = append(words, "FM_HOME="+Quote(p.Home))
	}
	for _, kv := range append(append([]string(nil), l.Env...), mode.Env...) {
		name, value, _ := strings.Cut(kv, "=")
		words = append(words, name+"="+Quote(value))
	}
	words = append(words, QuoteIfNeeded(h.Executable(p)))
	for _, a := range append(append([]string(nil), l.Args...), mode.Args...) {
		words = append(words, QuoteIfNeeded(a))
	}
	if m := p.Model; m != "" && m != "default" {
		if l.ModelFlag == "" {
			return "", fmt.Errorf("harness %s takes no model flag; launch it with model=default", h.Name)
		}
		if !ValidModel(m) {
			return "", fmt.Errorf("model '%s' has characters outside [A-Za-z0-9._:/@+-]", m)
		}
		words = append(words, l.ModelFlag, Quote(m))
	}
	if e := p.Effort; e != "" && e != "default" {
		if !ValidEffort(e) {
			return "", fmt.Errorf("effort '%s' is not one of %s", e, strings.Join(Efforts, ", "))
		}
		// A level the harness cannot express is left out rather than sent
		// as a value it would reject at start-up.
		if v, ok := l.EffortMap[e]; ok {
			switch l.EffortForm {
			case "codex-config":
				words = append(words, "-c", Quote(fmt.Sprintf("%s=%q", l.EffortFlag, v)))
			default:
				words = append(words, l.EffortFlag, Quote(v))
			}
		}
	}
	if l.Workspace != "" && p.Worktree != "" {
		words = append(words, l.Workspace, Quote(p.Worktree))
	}
	for _, a := range p.TelemetryArgs {
		words = append(words, QuoteIfNeeded(a))
	}
	for _, a := range p.ExtraArgs {
		words = append(words, Quote(a))
	}
	if l.PromptVia == PromptArgument && p.Brief != "" {
		if l.PromptFlag != "" {
			words = append(words, l.PromptFlag)
		}
		words = append(words, Quote(BriefPrompt(p.Brief)))
	}
	return strings.Join(words, " "), nil
}

// Quote single-quotes a word for a POSIX shell.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// QuoteIfNeeded leaves a plain word bare (so the line reads naturally) and
// quotes anything else.
func QuoteIfNeeded(s string) string {
	if s == "" {
		return "''"
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("._/-+=:,@", c) >= 0:
		default:
			return Quote(s)
		}
	}
	return s
}

// WiringPaths expands a harness's per-task wiring files for one task.
func (h Harness) WiringPaths(worktree, stateDir, id string) []string {
	var out []string
	for _, w := range h.Wiring {
		if p := ExpandWiring(w, worktree, stateDir, id); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ExpandWiring turns one table wiring entry ("wt/..." or "state/<id>...")
// into a path; "" when its root is not known.
func ExpandWiring(w, worktree, stateDir, id string) string {
	switch {
	case strings.HasPrefix(w, "wt/"):
		if worktree != "" {
			return worktree + "/" + strings.TrimPrefix(w, "wt/")
		}
	case strings.HasPrefix(w, "state/"):
		return stateDir + "/" + strings.ReplaceAll(strings.TrimPrefix(w, "state/"), "<id>", id)
	}
	return ""
}
