package seed

import (
	"context"
	"path/filepath"
)

// qwen (@qwen-code/qwen-code 0.15.10) reaches its composer in 3-10 s when
//   - security.auth.selectedType "anthropic" with ANTHROPIC_API_KEY and
//     ANTHROPIC_BASE_URL skips its auth dialog and sends the API calls to
//     the stub's Messages endpoint (<ModelURL>/v1/messages); its "openai"
//     auth would need chat completions, which the stub does not speak;
//   - model.name (and ANTHROPIC_MODEL) names the model it asks for.
//
// Folder trust is off by default (security.folderTrust.enabled), so a fresh
// worktree and its .qwen/settings.json hooks load without a dialog.
//
// qwen updated itself with `npm install --global` on a first start (seen on
// 0.24.4), writing outside the lab: general.enableAutoUpdate is off, and
// NPM_CONFIG_PREFIX points any npm it runs at the lab's HOME. Usage
// statistics are off so nothing else calls out.
func init() { preparers["qwen"] = prepareQwen }

// qwenAPIKey is a dummy: the stub model accepts anything.
const qwenAPIKey = "sk-ant-fmctl-test-dummy-qwen-key"

func prepareQwen(_ context.Context, r Run) (Prepared, error) {
	const model = "claude-sonnet-4-5"
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "anthropic"}},
		"model":    map[string]any{"name": model},
		"general":  map[string]any{"enableAutoUpdate": false},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	}
	if err := writeHomeJSON(r.Home, ".qwen/settings.json", settings); err != nil {
		return Prepared{}, err
	}
	return Prepared{Env: []string{
		"ANTHROPIC_API_KEY=" + qwenAPIKey,
		"ANTHROPIC_BASE_URL=" + r.ModelURL,
		"ANTHROPIC_MODEL=" + model,
		"NPM_CONFIG_PREFIX=" + filepath.Join(r.Home, ".npm-global"),
	}}, nil
}
