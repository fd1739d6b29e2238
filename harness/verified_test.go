package harness

import (
	"encoding/json"
	"os"
	"testing"
)

// The real-agent tier installs exactly the releases the table says were
// verified: a pin moved in one place and not the other fails here, in the
// fast suite, before anyone reads a stale "verified against".
func TestVerifiedReleasesArePinned(t *testing.T) {
	data, err := os.ReadFile("../tests/agents/npm/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	verified := 0
	for _, h := range Harnesses() {
		if h.Verified == nil {
			continue
		}
		verified++
		if got := pkg.Dependencies[h.Verified.Package]; got != h.Verified.Version {
			t.Errorf("%s is verified against %s %s, but tests/agents/npm pins %q", h.Name, h.Verified.Package, h.Verified.Version, got)
		}
	}
	if verified == 0 {
		t.Fatal("no harness records the release it was verified against")
	}
}
