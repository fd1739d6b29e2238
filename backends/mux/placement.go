package mux

import (
	"fmctl/backends"
	"fmctl/backends/tmux"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/state"
)

// Detect names the multiplexer the calling process runs inside, and the
// variable that says so; "" when it runs in none. HERDR_ENV is read before
// TMUX: herdr started from a tmux pane passes TMUX on to its own panes, and
// the innermost multiplexer is the one the caller sits in.
func Detect(env backends.Env) (name, variable string) {
	if env("HERDR_ENV") == "1" {
		return harness.BackendHerdr, "HERDR_ENV=1"
	}
	if env("TMUX") != "" {
		return harness.BackendTmux, "TMUX"
	}
	return "", ""
}

// ConfiguredContainer is where a fresh endpoint on backend name goes when
// the caller names none: the backend's session variable, else its
// config/fm.toml section; "" = the adapter's own default.
func ConfiguredContainer(name string, env backends.Env, m config.MuxVars, f config.File) string {
	var variable string
	var section config.SessionConfig
	switch name {
	case harness.BackendTmux:
		variable, section = m.TmuxSession, f.Tmux
	case harness.BackendHerdr:
		variable, section = env("HERDR_SESSION"), f.Herdr
	case harness.BackendZellij:
		variable, section = m.ZellijSession, f.Zellij
	default:
		return ""
	}
	if variable != "" {
		return variable
	}
	return section.Session
}

// DefaultTmuxSession holds task windows when neither FM_TMUX_SESSION nor
// config/fm.toml names a session (tmux.DefaultSession, for the spawn that
// reports where it put a window without holding the tmux adapter).
const DefaultTmuxSession = tmux.DefaultSession

// RecreateSpec is the spec that recreates a recorded endpoint that is
// provably gone where the record says, never in a default container: tmux's
// recorded session, herdr's recorded session and workspace.
func RecreateSpec(ep backends.Endpoint) backends.CreateSpec {
	spec := backends.CreateSpec{TaskID: ep.TaskID, Label: state.Label(ep.TaskID), Dir: ep.Worktree}
	switch ep.Backend {
	case harness.BackendTmux:
		spec.Container, _, _ = tmux.SplitTarget(ep.Target)
	case harness.BackendHerdr:
		spec.Container, spec.Workspace = ep.Field("herdr_session"), ep.Field("herdr_workspace_id")
	}
	return spec
}

// SettlesByLabel reports whether the backend's endpoints are found by their
// label alone (a tmux window named fm-<id> in a known session), so an
// endpoint a killed fm-spawn created but never recorded can be found and
// settled. herdr and zellij name panes by ids the record alone holds.
func SettlesByLabel(name string) bool { return name == harness.BackendTmux }
