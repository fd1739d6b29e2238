//go:build fmfault

package authority

import (
	"os"
	"strconv"
	"strings"

	"fmctl/state"
)

// testCaller is the test build's seam: FM_TEST_CALLER=<id>[:<pane pid>]
// makes the binary's caller task id, as if its process descended from that
// task's pane, so the testscripts can show the refusals without a real
// pane. Only a build with -tags fmfault has it (tests/faults proves release
// binaries lack the name); it is read here, not in config's table, for that
// reason.
func testCaller(store state.Store) (Caller, bool) {
	v := os.Getenv("FM_TEST_CALLER")
	if v == "" {
		return Caller{}, false
	}
	id, pid, _ := strings.Cut(v, ":")
	c := Caller{Task: id}
	c.PanePID, _ = strconv.Atoi(pid)
	if data, err := state.ReadSmallFile(store.MetaPath(id), state.MaxRecordBytes); err == nil {
		c.Grants, _ = ParseGrants(state.LastValue(data, state.KeyGrants))
	}
	return c, true
}
