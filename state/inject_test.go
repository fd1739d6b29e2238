package state

import "testing"

// needFaults skips the rest of a test that drives a fault seam in a build
// without them; make test builds with -tags fmfault, so they run there.
func needFaults(t *testing.T) {
	t.Helper()
	if !FaultsBuilt {
		t.Skip("the fault seams exist only with -tags fmfault (make test)")
	}
}
