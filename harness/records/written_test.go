package records

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Every record fmctl reads can say when it was last written: a busy agent
// of a harness without it could never be seen stalled.
func TestEveryReaderSaysItsLastWrite(t *testing.T) {
	for name, open := range readers {
		if _, ok := open(Where{}).(Written); !ok {
			t.Errorf("the %s reader has no LastWrite", name)
		}
	}
}

func TestLastWriteIsTheNewestFile(t *testing.T) {
	dir := t.TempDir()
	old, fresh := filepath.Join(dir, "old.jsonl"), filepath.Join(dir, "fresh.jsonl")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for f, at := range map[string]time.Time{old: base, fresh: base.Add(time.Hour)} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, at, at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := lastWrite([]string{fresh, filepath.Join(dir, "gone.jsonl"), old}, nil)
	if err != nil || !got.Equal(base.Add(time.Hour)) {
		t.Errorf("lastWrite = %v, %v; want %v", got, err, base.Add(time.Hour))
	}
	if got, err := lastWrite(nil, nil); err != nil || !got.IsZero() {
		t.Errorf("no files: %v, %v; want the zero time", got, err)
	}
}

func TestClaudeLastWriteReadsItsTranscripts(t *testing.T) {
	home, wt := t.TempDir(), "/work/wt"
	r := claudeReader{Where{Home: home, Worktree: wt}}
	if got, err := r.LastWrite(); err != nil || !got.IsZero() {
		t.Fatalf("no transcript: %v, %v", got, err)
	}
	f := filepath.Join(home, ".claude", "projects", claudeProjectDir(wt), "s.jsonl")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.WriteFile(f, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f, at, at); err != nil {
		t.Fatal(err)
	}
	if got, err := r.LastWrite(); err != nil || !got.Equal(at) {
		t.Errorf("LastWrite = %v, %v; want %v", got, err, at)
	}
}

// opencode and kilo share a reader, each on its own app's database files
// (the database and its -wal): kilo's write is its progress, and
// opencode's database under the same HOME is not.
func TestOpencodeAndKiloLastWriteReadTheirOwnDatabases(t *testing.T) {
	home := t.TempDir()
	at := map[string]time.Time{
		"opencode": time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC),
		"kilo":     time.Date(2026, 2, 3, 4, 9, 6, 0, time.UTC),
	}
	for app, when := range at {
		f := filepath.Join(home, ".local", "share", app, app+".db-wal")
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, when, when); err != nil {
			t.Fatal(err)
		}
	}
	for app, want := range at {
		r, err := For(app, Where{Home: home, Worktree: "/work/wt"})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := r.(Written).LastWrite(); err != nil || !got.Equal(want) {
			t.Errorf("%s: LastWrite = %v, %v; want %v", app, got, err, want)
		}
	}
}
