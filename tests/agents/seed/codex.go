package seed

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// codexAPIKey is a dummy: the stub model accepts anything.
const codexAPIKey = "sk-fmctl-test-dummy-key-0123456789abcdef"

// codex (@openai/codex 0.171.0) reaches its composer 1-2 s after launch and
// runs a launch-line prompt at once. Re-verified for this version:
//   - OPENAI_BASE_URL is not enough: turns go to the Responses WebSocket of
//     the built-in provider and retry "waiting for network" for minutes. A
//     provider of our own in config.toml, without websockets, POSTs
//     <ModelURL>/v1/responses (its retries are left at codex's defaults,
//     so a rate limit or a cut stream meets codex's own back-off);
//   - with that provider's env_key, OPENAI_API_KEY is the whole login: no
//     "codex login" is needed and no sign-in menu appears;
//   - without the project's trust_level the "Trust this folder?" dialog
//     opens; check_for_update_on_startup keeps the update prompt away.
//
// The TUI starts a background app-server daemon (and a pid-update loop)
// whose binary is copied into ~/.codex/packages; it outlives the pane, keeps
// a running turn going after /quit, and ignores SIGTERM while a turn is held.
func init() { preparers["codex"] = prepareCodex }

func prepareCodex(_ context.Context, r Run) (Prepared, error) {
	config := fmt.Sprintf(`check_for_update_on_startup = false
model_provider = "fmstub"

[model_providers.fmstub]
name = "fmctl stub model"
base_url = %q
wire_api = "responses"
env_key = "OPENAI_API_KEY"
supports_websockets = false

[projects.%q]
trust_level = "trusted"
`, r.ModelURL+"/v1", r.Worktree)
	path := filepath.Join(r.Home, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Prepared{}, fmt.Errorf("seed codex config: %w", err)
	}
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		return Prepared{}, fmt.Errorf("seed codex config: %w", err)
	}
	home := r.Home
	return Prepared{
		Env:     []string{"OPENAI_API_KEY=" + codexAPIKey},
		Cleanup: func() { stopCodexDaemons(home) },
	}, nil
}

// stopCodexDaemons stops the app-server processes started with this HOME and
// nothing else: a process counts only if its own environment says
// HOME=<home> (every run has a private HOME) and it is an app-server.
func stopCodexDaemons(home string) {
	pids := codexDaemons(home)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	if waitGone(home, 3*time.Second) {
		return
	}
	// A daemon holding a turn ignores SIGTERM.
	for _, pid := range codexDaemons(home) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	waitGone(home, 2*time.Second)
}

func waitGone(home string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		if len(codexDaemons(home)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// codexDaemons lists the live app-server processes whose HOME is home. A
// zombie has no environment left, so it no longer counts.
func codexDaemons(home string) []int {
	entries, _ := os.ReadDir("/proc")
	want := []byte("HOME=" + home)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !hasField(env, want) {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && hasField(cmd, []byte("app-server")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// hasField reports whether the NUL-separated list holds field exactly.
func hasField(list, field []byte) bool {
	for _, f := range bytes.Split(list, []byte{0}) {
		if bytes.Equal(f, field) {
			return true
		}
	}
	return false
}
