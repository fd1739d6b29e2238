package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Two teardowns of one id in one second archive into two directories: the
// first one's records are never replaced.
func TestArchivePathNeverReusesADirectory(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	first := s.ArchivePath("t1", at)
	if want := filepath.Join(s.Dir, "archive", "t1-20260102T030405Z"); first != want {
		t.Fatalf("ArchivePath = %s, want %s", first, want)
	}
	if err := os.MkdirAll(first, 0o755); err != nil {
		t.Fatal(err)
	}
	if second := s.ArchivePath("t1", at); second != first+".2" {
		t.Fatalf("with %s taken, ArchivePath = %s, want %s.2", first, second, first)
	}
}

// ArchiveTask moves every state/<id>.* file but the journal, then data/<id>/,
// then the record, and a second run after a crash moves what is left. A
// task whose id t1's prefix starts (t1.x) keeps its files.
func TestArchiveTaskMovesTheTasksFilesOnly(t *testing.T) {
	root := t.TempDir()
	s := Store{Dir: filepath.Join(root, "state")}
	data := filepath.Join(root, "data")
	for _, f := range []string{"state/t1.meta", "state/t1.event-key", "state/t1.teardown", "state/t10.meta", "state/t1.x.meta", "state/t1.x.event-key", "state/.control-t1.lock", "data/t1/brief.md", "data/t10/brief.md"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := s.ArchivePath("t1", time.Now())
	moved, err := s.ArchiveTask("t1", data, dir)
	if err != nil || len(moved) != 3 || moved[len(moved)-1] != "t1.meta" {
		t.Fatalf("ArchiveTask moved %v, %v; want t1.event-key, data, t1.meta (the record last)", moved, err)
	}
	for _, kept := range []string{"state/t1.teardown", "state/t10.meta", "state/t1.x.meta", "state/t1.x.event-key", "state/.control-t1.lock", "data/t10/brief.md"} {
		if _, err := os.Lstat(filepath.Join(root, kept)); err != nil {
			t.Errorf("%s was moved or lost: %v", kept, err)
		}
	}
	if again, err := s.ArchiveTask("t1", data, dir); err != nil || len(again) != 0 {
		t.Fatalf("a second run moved %v, %v; want nothing", again, err)
	}
	if err := s.MoveJournal("t1", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "t1.teardown")); err != nil {
		t.Fatalf("the journal did not move last: %v", err)
	}
}
