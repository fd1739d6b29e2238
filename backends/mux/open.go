// Package mux is the one package that knows every multiplexer adapter
// (backends/tmux, backends/herdr, backends/zellij): it opens the adapter a
// backend name names and says where a fresh endpoint goes. Everything else
// holds a backends.Backend and asks it for optional abilities.
package mux

import (
	"fmt"

	"fmctl/backends"
	"fmctl/backends/herdr"
	"fmctl/backends/tmux"
	"fmctl/backends/zellij"
	"fmctl/config"
)

// Open returns the adapter for a backend name, configured from m (the tmux
// socket a private server uses, zellij's session, ...) and env (herdr's
// session, the PATH a tmux server gives its panes).
//
// Every call the adapter makes is bounded by m.Timeout (FM_MUX_TIMEOUT).
func Open(name string, r backends.Runner, env backends.Env, m config.MuxVars) (backends.Backend, error) {
	timeout := m.Timeout
	switch name {
	case "tmux":
		return tmux.New(backends.Bounded{Inner: r, Timeout: timeout}, tmux.Options{
			Binary:     orDefault(m.TmuxBin, "tmux"),
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
