//go:build !fmfault

package authority

import "fmctl/state"

// testCaller is a no-op without -tags fmfault (see seam_on.go).
func testCaller(state.Store) (Caller, bool) { return Caller{}, false }
