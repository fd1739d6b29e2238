package seed

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// pi (@mariozechner/pi-coding-agent 0.73.1) reaches its composer in about
// 1-1.5 s with nothing but an API key: it has no onboarding, trust or login
// screen. models.json may override a built-in provider's baseUrl and keep its
// models (docs/models.md, "Overriding Built-in Providers"); with
// ANTHROPIC_API_KEY set, pi picks anthropic/claude-opus-4-7 and POSTs to
// <ModelURL>/v1/messages. PI_OFFLINE=1 skips the startup network work (update
// checks, telemetry, the fd/ripgrep download, which fails offline anyway).
func init() { preparers["pi"] = preparePi }

func preparePi(_ context.Context, r Run) (Prepared, error) {
	models := map[string]any{"providers": map[string]any{
		"anthropic": map[string]any{"baseUrl": r.ModelURL},
	}}
	if err := writeHomeJSON(r.Home, ".pi/agent/models.json", models); err != nil {
		return Prepared{}, err
	}
	return Prepared{Env: []string{
		"ANTHROPIC_API_KEY=sk-ant-fmctl-test-dummy-key",
		"PI_OFFLINE=1",
	}}, nil
}

// writeHomeJSON writes v as JSON to rel under home, creating its directories.
func writeHomeJSON(home, rel string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", rel, err)
	}
	path := filepath.Join(home, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("seed %s: %w", rel, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("seed %s: %w", rel, err)
	}
	return nil
}
