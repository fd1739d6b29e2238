package seed

import "context"

// gemini (@google/gemini-cli 0.61.0) reaches its composer in 2-5 s when
//   - GEMINI_CLI_TRUST_WORKSPACE=true skips the folder-trust dialog;
//   - GEMINI_API_KEY with security.auth.selectedType "gemini-api-key" skips
//     the auth picker (without a key it stops at "Enter Gemini API Key",
//     which takes typed text as the key);
//   - GOOGLE_GEMINI_BASE_URL sends the API calls to the stub
//     (<ModelURL>/v1beta/models/<model>:streamGenerateContent); the bundle
//     reads it for every auth type but Vertex.
//
// model.name is pinned because the default "auto" first asks a router model
// (gemini-3.5-flash-lite:generateContent) with the prompt: a held prompt then
// hangs in the router, and the prompt reaches the chat recording only once
// the main request starts, so TurnRunning could not see the busy turn.
// Auto-update and usage statistics are off so nothing else calls out.
//
// The user's own BeforeAgent hook sleeps HookHoldSeconds for a prompt
// holding SlowHookWord: gemini awaits its BeforeAgent hooks without the
// abort signal, so an interrupt then meets a prompt that is neither sent
// nor recorded as a turn yet (what fmctl's own hook does on a loaded
// machine, made certain).
func init() { preparers["gemini"] = prepareGemini }

func prepareGemini(_ context.Context, r Run) (Prepared, error) {
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"model":    map[string]any{"name": "gemini-2.5-flash"},
		"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
		"hooks": map[string]any{"BeforeAgent": []any{map[string]any{"hooks": []any{map[string]any{
			"type": "command", "name": "lab-slow-hook",
			"command": slowHookCommand(),
		}}}}},
	}
	if err := writeHomeJSON(r.Home, ".gemini/settings.json", settings); err != nil {
		return Prepared{}, err
	}
	return Prepared{Env: []string{
		"GEMINI_API_KEY=fmctl-test-dummy-gemini-key",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"GOOGLE_GEMINI_BASE_URL=" + r.ModelURL,
	}}, nil
}
