package retire

import (
	"path/filepath"
	"reflect"
	"testing"

	"fmctl/state"
)

// A plan survives its journal: recover acts on what the journal says, so a
// fact lost on the way (worktree= is filed with the relaunch header keys)
// would send it to remove the wrong thing, or nothing.
func TestPlanRoundTripsThroughItsJournal(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []Plan{
		{ID: "t1", Worktree: "/w/t1", Project: "/p", Branch: "fm/t1", Archive: "/h/state/archive/t1-x"},
		{ID: "s1", Worktree: "/w/s1", Project: "/w/s1", Keep: KeepMain, Archive: "/a", Force: true, Discards: "no report at /d", Secondmate: true},
	} {
		path := filepath.Join(dir, p.ID+".teardown")
		j := p.Journal()
		j.Phase = state.PhaseRemoving
		if err := state.WriteJournal(path, j); err != nil {
			t.Fatal(err)
		}
		back, err := state.ReadJournal(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := PlanOf(back); !reflect.DeepEqual(got, p) || back.Phase != state.PhaseRemoving {
			t.Errorf("read back %+v in phase %s, want %+v", got, back.Phase, p)
		}
	}
}

func TestIgnoreDropsOnlyFmctlsOwnFiles(t *testing.T) {
	ig := Ignore(map[string]bool{".claude/settings.local.json": true}, true)
	for path, want := range map[string]bool{
		".claude/settings.local.json": true,
		"state/c1.meta":               true,
		".fm-secondmate-home":         true,
		"statement.md":                false,
		"src/state/x.go":              false,
		".claude/other.json":          false,
	} {
		if ig(path) != want {
			t.Errorf("Ignore(%q) = %v, want %v", path, !want, want)
		}
	}
	if Ignore(nil, false)("state/c1.meta") {
		t.Error("a ship's state/ directory is its own work")
	}
}
