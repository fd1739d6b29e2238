package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// hooks emulates the telemetry wiring fm-spawn gives a real harness, so a
// fake agent reports ready, busy, idle and ended the way the real one would:
// codex's `-c hooks.<Event>=[...]` overrides on its command line, and
// claude's hooks in the worktree's .claude/settings.local.json. Keys are the
// harnesses' own event names; values are the shell commands to run.
type hooks map[string][]string

type hookGroups []struct {
	Hooks []struct {
		Type    string `json:"type" toml:"type"`
		Command string `json:"command" toml:"command"`
	} `json:"hooks" toml:"hooks"`
}

func (h hooks) add(event string, groups hookGroups) {
	for _, g := range groups {
		for _, c := range g.Hooks {
			if c.Type == "command" && c.Command != "" {
				h[event] = append(h[event], c.Command)
			}
		}
	}
}

// loadHooks reads the wiring from the command line and the working directory.
func loadHooks(args []string) hooks {
	h := hooks{}
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "-c" {
			continue
		}
		key, value, ok := strings.Cut(args[i+1], "=")
		event, isHook := strings.CutPrefix(key, "hooks.")
		if !ok || !isHook {
			continue
		}
		var v struct{ V hookGroups }
		if _, err := toml.Decode("V = "+value, &v); err == nil {
			h.add(event, v.V)
		}
	}
	if data, err := os.ReadFile(".claude/settings.local.json"); err == nil {
		var settings struct{ Hooks map[string]hookGroups }
		if json.Unmarshal(data, &settings) == nil {
			for event, groups := range settings.Hooks {
				h.add(event, groups)
			}
		}
	}
	return h
}

// run runs every command wired to event, each bounded, as the harness would.
func (h hooks) run(event string) {
	for _, command := range h[event] {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Stdin = strings.NewReader("{}")
		cmd.Run()
		cancel()
	}
}
