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

// The oldest release a harness claims is the one AGENTS=oldest installs, and
// the range is ordered: a claim that the tier never ran fails here.
func TestVerifiedRangeIsTheOldestChannel(t *testing.T) {
	data, err := os.ReadFile("../tests/agents/npm/oldest/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	for _, h := range Harnesses() {
		if h.Verified == nil || h.Verified.Oldest == "" {
			continue
		}
		if got := pkg.Dependencies[h.Verified.Package]; got != h.Verified.Oldest {
			t.Errorf("%s claims %s %s as its oldest, but tests/agents/npm/oldest installs %q", h.Name, h.Verified.Package, h.Verified.Oldest, got)
		}
	}
	r := Release{Package: "p", Version: "1.2.0", Oldest: "1.0.0", Newest: "1.3.0"}
	if got := r.Range(); got != "1.0.0..1.3.0" {
		t.Errorf("Range = %q", got)
	}
	if got := (Release{Package: "p", Version: "1.2.0"}).Range(); got != "1.2.0" {
		t.Errorf("Range of one version = %q", got)
	}
}
