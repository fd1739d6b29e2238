package backends

import (
	"fmt"
	"path/filepath"
	"time"

	"fmctl/backends/tmuxwire"
	"fmctl/config"
)

// Env reads an environment variable.
type Env func(string) string

// Open returns the adapter for a backend name, configured from the
// environment (the tmux socket a private server uses, herdr's session, ...).
//
// Every call the adapter makes is bounded by FM_MUX_TIMEOUT (a Go duration or
// seconds; DefaultMuxTimeout when unset or invalid).
func Open(name string, r Runner, env Env) (Backend, error) {
	timeout := MuxTimeout(env)
	switch name {
	case "tmux":
		bin := orDefault(env("FM_TMUX_BIN"), "tmux")
		wireSetting := env("FM_TMUX_WIRE") // "0" off, "1" opted in, else the default
		// The wire replaces tmux client processes only; a test's scripted
		// runner, and FM_TMUX_WIRE=0, keep every call a process. It runs
		// inside the bound, which ends a wire call as it kills a process.
		// It decides per call whether the server may take it: by default
		// only a tested release that cannot die of a bad message (3.7c);
		// FM_TMUX_WIRE=1 opens it to 3.2 to 3.7, at the risk of the server.
		if er, ok := r.(*ExecRunner); ok && wireSetting != "0" {
			wire := &tmuxwire.Wire{Binary: bin, OptIn: wireSetting == "1", CachePath: wireCachePath(env)}
			r = &TmuxWire{Exec: er, Binary: bin, Carrier: wire, TracePath: er.TracePath}
		}
		return NewTmux(Bounded{Inner: r, Timeout: timeout}, TmuxOptions{
			Binary:     bin,
			Socket:     env("FM_TMUX_SOCKET"),
			SocketPath: env("FM_TMUX_SOCKET_PATH"),
		}), nil
	case "herdr":
		return NewHerdr(Bounded{Inner: r, Timeout: timeout}, HerdrOptions{
			Binary:         orDefault(env("FM_HERDR_BIN"), "herdr"),
			DefaultSession: orDefault(env("HERDR_SESSION"), "default"),
		}), nil
	case "zellij":
		return NewZellij(Bounded{Inner: r, Timeout: timeout}, ZellijOptions{
			Binary:         orDefault(env("FM_ZELLIJ_BIN"), "zellij"),
			DefaultSession: orDefault(env("FM_ZELLIJ_SESSION"), "firstmate"),
		}), nil
	}
	return nil, fmt.Errorf("fmctl has no adapter for backend '%s'", name)
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// MuxTimeout reads FM_MUX_TIMEOUT: seconds ("2.5") or a Go duration ("500ms").
// A malformed or zero value keeps the default: an unbounded call is exactly
// what this setting exists to prevent.
func MuxTimeout(env Env) time.Duration {
	if d := config.Duration(config.Env(env), "FM_MUX_TIMEOUT", DefaultMuxTimeout); d > 0 {
		return d
	}
	return DefaultMuxTimeout
}

// wireCachePath is where the tmux wire keeps the tmux file's version: the
// user's cache directory ($XDG_CACHE_HOME, else ~/.cache), since the tmux
// binary is the machine's, not one home's.
func wireCachePath(env Env) string {
	dir := env("XDG_CACHE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := env("HOME")
		if home == "" || !filepath.IsAbs(home) {
			return ""
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "fmctl", "tmux-wire")
}
