package seed

import (
	"context"
	"fmt"
	"os"
)

// claudeAPIKey is a dummy: the stub model accepts anything. claude asks
// whether to use a key from the environment unless the key's last 20
// characters are listed as approved in ~/.claude.json.
const claudeAPIKey = "sk-ant-fmctl-test-dummy-key-0123456789abcdef"

// claude (@anthropic-ai/claude-code 2.1.197) reaches its composer about 1 s
// after launch, and runs a launch-line prompt against ANTHROPIC_BASE_URL at
// once. Re-verified one field at a time: without hasCompletedOnboarding it
// opens the theme picker, without customApiKeyResponses the "Detected a
// custom API key" dialog, without the project's hasTrustDialogAccepted the
// "Accessing workspace" trust dialog, and as root without IS_SANDBOX=1 it
// refuses --dangerously-skip-permissions and exits. theme,
// lastOnboardingVersion, bypassPermissionsModeAccepted and the settings.json
// flag made no difference in this version; they are kept because older
// versions asked for them (../shared/spec/agents.md).
func init() { preparers["claude"] = prepareClaude }

func prepareClaude(_ context.Context, r Run) (Prepared, error) {
	if r.Version == "" {
		return Prepared{}, fmt.Errorf("seed claude: no version given (claude re-runs onboarding for another version)")
	}
	state := map[string]any{
		"hasCompletedOnboarding":        true,
		"lastOnboardingVersion":         r.Version,
		"theme":                         "dark",
		"bypassPermissionsModeAccepted": true,
		"customApiKeyResponses": map[string]any{
			"approved": []string{claudeAPIKey[len(claudeAPIKey)-20:]},
			"rejected": []string{},
		},
		"projects": map[string]any{
			r.Worktree: map[string]any{"hasTrustDialogAccepted": true},
		},
	}
	if err := writeHomeJSON(r.Home, ".claude.json", state); err != nil {
		return Prepared{}, err
	}
	settings := map[string]any{"skipDangerousModePermissionPrompt": true}
	if err := writeHomeJSON(r.Home, ".claude/settings.json", settings); err != nil {
		return Prepared{}, err
	}
	env := []string{
		"ANTHROPIC_API_KEY=" + claudeAPIKey,
		"ANTHROPIC_BASE_URL=" + r.ModelURL,
		"DISABLE_AUTOUPDATER=1",
	}
	if os.Geteuid() == 0 {
		// claude accepts exactly "1" here.
		env = append(env, "IS_SANDBOX=1")
	}
	return Prepared{Env: env}, nil
}
