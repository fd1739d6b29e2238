package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSubmitStampRoundTripsAndRefusesJunk(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if _, ok := s.LastSubmitted("t1"); ok {
		t.Fatal("a task never sent to has a submit stamp")
	}
	at := time.Unix(1_800_000_000, 123456789)
	if err := s.StampSubmitted("t1", at); err != nil {
		t.Fatal(err)
	}
	got, ok := s.LastSubmitted("t1")
	if !ok || !got.Equal(at) {
		t.Fatalf("read %v %v, want %v", got, ok, at)
	}
	for _, junk := range []string{"", "soon\n", "-5\n", "12 34\n"} {
		if err := os.WriteFile(s.SubmittedPath("t1"), []byte(junk), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, ok := s.LastSubmitted("t1"); ok {
			t.Errorf("stamp %q read as %v", junk, got)
		}
	}
}

// The stamp is written like every record: never through a symlink.
func TestSubmitStampDoesNotFollowASymlink(t *testing.T) {
	dir := t.TempDir()
	s := Store{Dir: dir}
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, s.SubmittedPath("t1")); err != nil {
		t.Fatal(err)
	}
	_ = s.StampSubmitted("t1", time.Now())
	if data, _ := os.ReadFile(target); string(data) != "keep\n" {
		t.Fatalf("the stamp wrote through a symlink: %q", data)
	}
}
