package state

import (
	"path/filepath"
	"reflect"
	"testing"
)

// A header written through JournalHeader reads back as the header, in its
// written order, with no line taken for a phase's.
func TestJournalHeaderRoundTrips(t *testing.T) {
	h := JournalHeader{Task: "t1", Backend: "b", Endpoint: "s:fm-t1", Worktree: "/w", Kind: "ship",
		FromHarness: "claude", FromModel: "default", FromEffort: "high", ToHarness: "codex", ToModel: "m", ToEffort: "low"}
	path := filepath.Join(t.TempDir(), "t1.control-relaunch")
	j := Journal{Header: h.Record(), Phase: PhaseLaunching, Extra: Record{Entries: []Entry{{JournalRelaunchTx, "tx1"}}}}
	if err := WriteJournal(path, j); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Header, h.Record()) {
		t.Errorf("header read back as %v, want %v", got.Header, h.Record())
	}
	if got.ToHarness() != "codex" || got.Phase != PhaseLaunching || got.Extra.Get(JournalRelaunchTx) != "tx1" || len(got.Extra.Entries) != 1 {
		t.Errorf("read back to_harness=%q phase=%q extra=%v", got.ToHarness(), got.Phase, got.Extra)
	}
}
