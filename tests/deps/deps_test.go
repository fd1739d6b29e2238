// Package deps keeps the binaries' start-up lean: agents call them in loops,
// so a package that costs every invocation start-up time must not creep in.
package deps

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Whether the binaries link cgo is the build's business, not an import's:
// `make build` sets CGO_ENABLED=0, which gives net Go's own resolver, and
// tests/faults proves its binaries static.
var banned = map[string]string{
	"net/http": "no network client belongs in these binaries",
}

func TestBinariesImportNothingBanned(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "fmctl/cmd/fm-send", "fmctl/cmd/fm-control", "fmctl/cmd/fm-spawn", "fmctl/cmd/fm-teardown")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if why, bad := banned[pkg]; bad {
			t.Errorf("the binaries import %s: %s", pkg, why)
		}
	}
}
