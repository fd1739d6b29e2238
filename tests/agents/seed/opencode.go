package seed

import "context"

// opencode (opencode-ai 1.18.33) needs no onboarding: with an Anthropic key
// it opens on "Ask anything…" with Build · Claude Sonnet 4.6 (7-11 s on a
// loaded 2-core machine, most of it the binary's own start). The base URL
// goes in the global config FILE, because fmctl's launch line already sets
// OPENCODE_CONFIG_CONTENT (harness/table.go) and the two layers merge; the
// Anthropic SDK appends /messages, so the URL carries /v1. The title agent
// (claude-haiku-4-5) calls it too, once per session.
//
// OPENCODE_DISABLE_MODELS_FETCH (present in the 1.18.33 binary's strings)
// keeps it from fetching models.dev: it uses the model list built into the
// binary, so nothing waits on a network timeout. Auto-update, sharing and LSP
// downloads are off for the same reason. opencode leaves no process behind
// when it exits (checked with ps after /exit and C-c), so no Cleanup.
func init() { preparers["opencode"] = prepareOpencode }

func prepareOpencode(_ context.Context, r Run) (Prepared, error) {
	if err := writeHomeJSON(r.Home, ".config/opencode/opencode.json", opencodeConfig("https://opencode.ai/config.json", r)); err != nil {
		return Prepared{}, err
	}
	return Prepared{Env: []string{
		"ANTHROPIC_API_KEY=sk-ant-fmctl-test-dummy-key",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
	}}, nil
}

// opencodeConfig is the global config opencode and its fork kilo read alike:
// no update, no sharing, and the Anthropic provider pointed at the stub.
func opencodeConfig(schema string, r Run) map[string]any {
	return map[string]any{
		"$schema":    schema,
		"autoupdate": false,
		"share":      "disabled",
		"provider": map[string]any{
			"anthropic": map[string]any{"options": map[string]any{"baseURL": r.ModelURL + "/v1"}},
		},
	}
}
