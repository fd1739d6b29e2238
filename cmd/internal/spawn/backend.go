package spawn

import (
	"context"

	"fmctl/backends"
	"fmctl/backends/mux"
	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/phrase"
	"fmctl/state"
)

// chooseBackend picks the backend a fresh task runs on: --backend, then
// FM_BACKEND, then the home's choice (config/backend or fm.toml's backend,
// which must agree), then the multiplexer fm-spawn runs inside
// (mux.Detect), then state.DefaultBackend. detected names the variable
// that decided, if any.
func (s Spawner) chooseBackend(home config.Home, f config.File, flag string) (name, detected string, err error) {
	if flag != "" {
		return flag, "", nil
	}
	if v := s.Tunables.Spawn.Backend; v != "" {
		return v, "", nil
	}
	file, err := home.BackendFile()
	if err != nil {
		return "", "", fault.Failed("%w", err)
	}
	if file != "" && f.Backend != "" && file != f.Backend {
		return "", "", fault.Failed("config/backend says '%s' but config/fm.toml says backend = '%s'; keep one of them", phrase.Printable(file), phrase.Printable(f.Backend))
	}
	if file != "" {
		return file, "", nil
	}
	if f.Backend != "" {
		return f.Backend, "", nil
	}
	if name, variable := mux.Detect(backends.Env(s.Env)); name != "" {
		return name, variable, nil
	}
	return state.DefaultBackend, "", nil
}

// tmuxSession is the session a fresh tmux window goes into: the configured
// one (FM_TMUX_SESSION, [tmux] session), else, when fm-spawn runs inside a
// pane of the same server, that pane's session, else firstmate.
func (s Spawner) tmuxSession(ctx context.Context, be backends.Backend, configured string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	// A named socket is a server of its own; the caller's session lives on
	// the server $TMUX points at.
	if s.Env("TMUX") == "" || s.Tunables.Mux.TmuxSocket != "" || s.Tunables.Mux.TmuxSocketPath != "" {
		return mux.DefaultTmuxSession, nil
	}
	t, ok := be.(backends.CallerSessionReader)
	if !ok {
		return mux.DefaultTmuxSession, nil
	}
	sess, err := t.CallerSession(ctx, s.Env("TMUX_PANE"))
	if err != nil {
		return "", fault.Failed("fm-spawn runs inside tmux, but the session to put the task's window in cannot be read (%v); set FM_TMUX_SESSION or [tmux] session in config/fm.toml", err).Coded(fault.ENoAdapter)
	}
	return sess, nil
}
