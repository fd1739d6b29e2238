package backends

import (
	"fmt"
)

// Env reads an environment variable.
type Env func(string) string

// Open returns the adapter for a backend name, configured from the
// environment (the tmux socket a private server uses, herdr's session, ...).
func Open(name string, r Runner, env Env) (Backend, error) {
	switch name {
	case "tmux":
		return NewTmux(r, TmuxOptions{
			Binary:     orDefault(env("FM_TMUX_BIN"), "tmux"),
			Socket:     env("FM_TMUX_SOCKET"),
			SocketPath: env("FM_TMUX_SOCKET_PATH"),
		}), nil
	case "herdr":
		return NewHerdr(r, HerdrOptions{
			Binary:         orDefault(env("FM_HERDR_BIN"), "herdr"),
			DefaultSession: orDefault(env("HERDR_SESSION"), "default"),
		}), nil
	case "zellij":
		return NewZellij(r, ZellijOptions{
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
