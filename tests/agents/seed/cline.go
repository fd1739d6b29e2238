package seed

import (
	"context"
	"fmt"
	"net"
	"strconv"
)

// cline (3.0.65) reaches its composer in 5-10 s when
//   - ~/.cline/data/settings/providers.json names the openai-compatible
//     provider with the stub's chat completions endpoint (<ModelURL>/v1),
//     a key and a model: the file `cline auth -p openai -k K -m M -b URL`
//     writes, seeded as it wrote it, so no sign-in is asked;
//   - ~/.cline/data/settings/cli-notices.json marks its two notices
//     (ClinePass, Cline Desktop) shown: the first start otherwise opens one
//     over the composer until a key closes it.
//
// The TUI starts a hub daemon (.cline --cline-hub-daemon, in a session of
// its own) that outlives it and runs every later TUI's turns; it listens on
// 127.0.0.1:25463 unless CLINE_HUB_PORT says otherwise, and a TUI that finds
// no hub in its HOME's discovery file probes that port. Each lab gets a free
// port of its own, so no lab's TUI reaches another lab's hub. The hub keeps
// the lab's HOME, so the lab's teardown (every process with that HOME) ends
// it. cline has no auto-update at start (its update is `cline update`).
func init() { preparers["cline"] = prepareCline }

// clineAPIKey is a dummy: the stub model accepts anything.
const clineAPIKey = "fmctl-test-dummy-cline-key"

func prepareCline(_ context.Context, r Run) (Prepared, error) {
	providers := map[string]any{
		"version":          1,
		"lastUsedProvider": "openai-compatible",
		"modes":            map[string]any{},
		"providers": map[string]any{"openai-compatible": map[string]any{
			"settings": map[string]any{"provider": "openai-compatible", "apiKey": clineAPIKey,
				"model": "fmctl-stub", "baseUrl": r.ModelURL + "/v1"},
			// Without updatedAt the provider is not taken and the TUI
			// opens its sign-in screen.
			"updatedAt":   "2026-12-06T00:00:00.000Z",
			"tokenSource": "manual",
		}},
	}
	if err := writeHomeJSON(r.Home, ".cline/data/settings/providers.json", providers); err != nil {
		return Prepared{}, err
	}
	notices := map[string]any{"shown": map[string]bool{"cline-cli-cline-pass-intro": true, "cline-cli-desktop-launch": true}}
	if err := writeHomeJSON(r.Home, ".cline/data/settings/cli-notices.json", notices); err != nil {
		return Prepared{}, err
	}
	port, err := freePort()
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Env: []string{"CLINE_HUB_PORT=" + strconv.Itoa(port)}}, nil
}

// freePort is a loopback port no one listened on a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a port for cline's hub: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
