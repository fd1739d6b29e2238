// Package seed prepares a private HOME so a real agent CLI reaches its
// composer offline with no keypress. It is the one place the real-agent tier
// keeps these facts (../shared/spec/agents.md, re-verified per version).
package seed

import (
	"context"
	"fmt"
)

// Run describes one agent run to prepare.
type Run struct {
	Home     string // the private HOME (created by the caller, empty)
	Worktree string // the git worktree the agent will run in (absolute)
	BinDir   string // directory holding the installed CLIs (node_modules/.bin)
	Version  string // the installed version of the harness's package
	// ModelURL is the loopback model stub (tests/agents/stubmodel) the agent
	// must call instead of its real API: http://127.0.0.1:port, no slash.
	ModelURL string
}

// Prepared is what a prepared run needs from its tmux server.
type Prepared struct {
	// Env is set on the private tmux server (set-environment -g), so the
	// pane's shell and the agent started from it inherit it.
	Env []string
	// Cleanup stops whatever the agent left running outside its pane (codex's
	// app-server daemon); nil when nothing needs stopping.
	Cleanup func()
}

// Prepare seeds r.Home for harness name.
func Prepare(ctx context.Context, name string, r Run) (Prepared, error) {
	prep, ok := preparers[name]
	if !ok {
		return Prepared{}, fmt.Errorf("no offline seeding for harness %q", name)
	}
	return prep(ctx, r)
}

// preparers is filled by one file per harness (claude.go, codex.go, ...).
var preparers = map[string]func(context.Context, Run) (Prepared, error){}

// SlowHookWord in a prompt makes the lab agent's own prompt hook (the
// user's, in its settings: gemini's BeforeAgent) hold the prompt for
// HookHoldSeconds before its request. Not claude's UserPromptSubmit: claude
// records the prompt only after that hook, so fm-send, which waits for the
// record, returns after the hold, and an interrupt never meets it.
const (
	SlowHookWord    = "fmslowhook"
	HookHoldSeconds = 3
)

// slowHookCommand is that hook's shell command: it reads the hook's JSON
// payload, which holds the prompt.
func slowHookCommand() string {
	return fmt.Sprintf(`case "$(cat)" in *%s*) sleep %d;; esac`, SlowHookWord, HookHoldSeconds)
}
