package seed

import "context"

// copilot (@github/copilot 1.0.102) reaches its composer in 3-8 s when
//   - ~/.copilot/config.json lists the worktree in trustedFolders, so its
//     folder-trust dialog is not shown (in settings.json it is not read);
//     auto mode's COPILOT_ALLOW_ALL=true trusts it too, ask mode does not;
//   - COPILOT_PROVIDER_BASE_URL with COPILOT_PROVIDER_TYPE=anthropic sends
//     the model calls to the stub's Messages endpoint (<ModelURL>/v1/messages)
//     with no GitHub login; its default type would need chat completions,
//     which the stub does not speak;
//   - COPILOT_OFFLINE=true turns off GitHub auth, telemetry and auto-update;
//     COPILOT_AUTO_UPDATE=false and autoUpdate:false say so twice;
//   - COPILOT_MODEL names a model of its built-in catalog, so no warning
//     about unknown token limits is drawn.
//
// Its npm loader unpacks about 235 MB into $HOME/.cache/copilot/pkg on the
// first start: the lab's HOME.
func init() { preparers["copilot"] = prepareCopilot }

func prepareCopilot(_ context.Context, r Run) (Prepared, error) {
	if err := writeHomeJSON(r.Home, ".copilot/config.json", map[string]any{"trustedFolders": []string{r.Worktree}}); err != nil {
		return Prepared{}, err
	}
	if err := writeHomeJSON(r.Home, ".copilot/settings.json", map[string]any{"autoUpdate": false, "banner": "never"}); err != nil {
		return Prepared{}, err
	}
	return Prepared{Env: []string{
		"COPILOT_PROVIDER_BASE_URL=" + r.ModelURL,
		"COPILOT_PROVIDER_TYPE=anthropic",
		"COPILOT_PROVIDER_API_KEY=sk-ant-fmctl-test-dummy-copilot-key",
		"COPILOT_MODEL=claude-sonnet-4.6",
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
	}}, nil
}
