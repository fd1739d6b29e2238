// Package mux is the one package that knows every multiplexer adapter
// (backends/tmux, backends/herdr, backends/zellij): it opens the adapter a
// backend name names and says where a fresh endpoint goes. Everything else
// holds a backends.Backend and asks it for optional abilities.
package mux

import (
	"fmt"
	"path/filepath"

	"fmctl/backends"
	"fmctl/backends/herdr"
	"fmctl/backends/tmux"
	"fmctl/backends/tmux/wire"
	"fmctl/backends/zellij"
	"fmctl/config"
)

// Open returns the adapter for a backend name, configured from m (the tmux
// socket a private server uses, zellij's session, ...) and env (herdr's
// session, the cache directory).
//
// Every call the adapter makes is bounded by m.Timeout (FM_MUX_TIMEOUT).
func Open(name string, r backends.Runner, env backends.Env, m config.MuxVars) (backends.Backend, error) {
	timeout := m.Timeout
	switch name {
	case "tmux":
		bin := orDefault(m.TmuxBin, "tmux")
		// The wire replaces tmux client processes only; a test's scripted
		// runner, and FM_TMUX_WIRE=0, keep every call a process. It runs
		// inside the bound, which ends a wire call as it kills a process.
		// It decides per call whether the server may take it: by default
		// only a tested release that cannot die of a bad message (3.7c);
		// FM_TMUX_WIRE=1 opens it to 3.2 to 3.7, at the risk of the server.
		if er, ok := r.(*backends.ExecRunner); ok && m.TmuxWire != "0" {
			carrier := &wire.Wire{Binary: bin, OptIn: m.TmuxWire == "1", CachePath: wireCachePath(env)}
			r = &tmux.WireRunner{Exec: er, Binary: bin, Carrier: carrier, TracePath: er.TracePath}
		}
		return tmux.New(backends.Bounded{Inner: r, Timeout: timeout}, tmux.Options{
			Binary:     bin,
			Socket:     m.TmuxSocket,
			SocketPath: m.TmuxSocketPath,
			ServerPath: env("PATH"),
		}), nil
	case "herdr":
		return herdr.New(backends.Bounded{Inner: r, Timeout: timeout}, herdr.Options{
			Binary:         orDefault(m.HerdrBin, "herdr"),
			DefaultSession: orDefault(env("HERDR_SESSION"), "default"),
		}), nil
	case "zellij":
		return zellij.New(backends.Bounded{Inner: r, Timeout: timeout}, zellij.Options{
			Binary:         orDefault(m.ZellijBin, "zellij"),
			DefaultSession: orDefault(m.ZellijSession, "firstmate"),
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

// wireCachePath is where the tmux wire keeps the tmux file's version: the
// user's cache directory ($XDG_CACHE_HOME, else ~/.cache), since the tmux
// binary is the machine's, not one home's.
func wireCachePath(env backends.Env) string {
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
