package seed

import (
	"context"
	"path/filepath"
)

// kilo (@kilocode/cli 7.7.7) needs no onboarding either: with an Anthropic
// key and its provider's base URL in the global config file
// (~/.config/kilo/kilo.json; the launch line already sets
// KILO_CONFIG_CONTENT and the layers merge), it opens on "Ask anything..."
// with Code · Claude Sonnet 4.6 Anthropic, 15-20 s after launch on a loaded
// 2-core machine. The Anthropic SDK appends /messages, so the URL carries
// /v1; the turns reach the stub in its anthropic dialect.
//
// KILO_DISABLE_MODELS_FETCH keeps it on the model list built into the binary,
// KILO_DISABLE_AUTOUPDATE and autoupdate=false keep it from replacing
// itself, and KILO_TELEMETRY_LEVEL other than "all" turns its PostHog client
// off (the 7.7.7 binary's strings). NPM_CONFIG_PREFIX keeps any package
// install it starts (plugins' dependencies) inside the lab, as HOME keeps its
// config, database and logs. It leaves no process behind after /exit or a
// double C-c (checked with ps), so no Cleanup.
func init() { preparers["kilo"] = prepareKilo }

func prepareKilo(_ context.Context, r Run) (Prepared, error) {
	config := opencodeConfig("https://app.kilo.ai/config.json", r)
	// Its git snapshot of the worktree before a turn waited out its whole
	// 120 s budget on a loaded machine ("snapshot turn operation exceeded
	// availability budget"), holding the launch turn for two minutes; the
	// tier judges delivery and turns, not snapshots.
	config["snapshot"] = false
	if err := writeHomeJSON(r.Home, ".config/kilo/kilo.json", config); err != nil {
		return Prepared{}, err
	}
	return Prepared{Env: []string{
		"ANTHROPIC_API_KEY=sk-ant-fmctl-test-dummy-key",
		"KILO_DISABLE_AUTOUPDATE=1",
		"KILO_DISABLE_MODELS_FETCH=1",
		"KILO_DISABLE_LSP_DOWNLOAD=1",
		"KILO_TELEMETRY_LEVEL=off",
		"NPM_CONFIG_PREFIX=" + filepath.Join(r.Home, ".npm-global"),
	}}, nil
}
