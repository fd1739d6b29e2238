package seed

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestClaudeSeed(t *testing.T) {
	home, wt := t.TempDir(), "/tmp/some/wt"
	p, err := Prepare(context.Background(), "claude", Run{Home: home, Worktree: wt, Version: "2.1.197", ModelURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Env, "ANTHROPIC_BASE_URL=http://127.0.0.1:9") || !slices.Contains(p.Env, "DISABLE_AUTOUPDATER=1") {
		t.Errorf("env %q lacks the stub URL or the updater switch", p.Env)
	}
	if os.Geteuid() == 0 && !slices.Contains(p.Env, "IS_SANDBOX=1") {
		t.Errorf("env %q: as root claude needs IS_SANDBOX=1", p.Env)
	}
	var key string
	for _, e := range p.Env {
		if v, ok := strings.CutPrefix(e, "ANTHROPIC_API_KEY="); ok {
			key = v
		}
	}
	data, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		HasCompletedOnboarding bool
		LastOnboardingVersion  string
		CustomAPIKeyResponses  struct{ Approved []string } `json:"customApiKeyResponses"`
		Projects               map[string]struct{ HasTrustDialogAccepted bool }
	}
	if err := json.Unmarshal(data, &state); err != nil {
		t.Fatal(err)
	}
	if !state.HasCompletedOnboarding || state.LastOnboardingVersion != "2.1.197" || !state.Projects[wt].HasTrustDialogAccepted {
		t.Errorf(".claude.json does not skip onboarding and trust for %s: %s", wt, data)
	}
	if len(key) < 20 || !slices.Contains(state.CustomAPIKeyResponses.Approved, key[len(key)-20:]) {
		t.Errorf("the key in env (%q) is not approved in .claude.json: %s", key, data)
	}
}

func TestClaudeSeedNeedsVersion(t *testing.T) {
	if _, err := Prepare(context.Background(), "claude", Run{Home: t.TempDir(), Worktree: "/w"}); err == nil {
		t.Error("no error without a version")
	}
}
