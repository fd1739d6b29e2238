package fakeframe

import (
	"os/exec"
	"slices"
	"testing"

	"fmctl/backends"
	"fmctl/backends/sqlite"
	"fmctl/harness/records"
)

// The fake's opencode database reads back through harness/records as the
// real one does: each prompt once, in order, apostrophes and tabs intact.
func TestOpencodePromptReadsBack(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("no sqlite3 CLI")
	}
	home, dir := t.TempDir(), t.TempDir()
	prompts := []string{"it's\tone", "two\nlines"}
	for _, p := range prompts {
		if err := RecordPrompt("opencode", home, dir, p); err != nil {
			t.Fatal(err)
		}
	}
	r, err := records.For("opencode", records.Where{Home: home, Worktree: dir, Query: sqlite.Query(backends.NewExecRunner(""))})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.UserMessages()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, prompts) {
		t.Fatalf("UserMessages() = %q, want %q", got, prompts)
	}
	if running, err := r.TurnRunning(); err != nil || running {
		t.Fatalf("TurnRunning() = %v, %v; want false: the fake's turn ends at once", running, err)
	}
}
