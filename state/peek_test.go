package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLastValueTakesTheLastLineLikeGet(t *testing.T) {
	data := []byte("window=a\ntmux_pane_pid=1\nkind=ship\ntmux_pane_pid=42\nxtmux_pane_pid=9\n")
	rec, err := ParseRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{KeyTmuxPanePID, KeyKind, KeyWindow, "absent"} {
		if got, want := LastValue(data, k), rec.Get(k); got != want {
			t.Errorf("LastValue(%s) = %q, Get = %q", k, got, want)
		}
	}
	if got := LastValue([]byte("kind=scout"), KeyKind); got != "scout" {
		t.Errorf("without a final newline: %q", got)
	}
	if got := LastValue(nil, KeyKind); got != "" {
		t.Errorf("empty record: %q", got)
	}
}

func TestPeekRecordReadsWholeAndFollowsNoSymlink(t *testing.T) {
	dir := t.TempDir()
	s := Store{Dir: dir}
	long := "window=w\nnote=" + strings.Repeat("x", 5000) + "\ntmux_pane_pid=7\n"
	if err := os.WriteFile(s.MetaPath("t1"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := s.PeekRecord("t1", make([]byte, 0, 16))
	if err != nil || string(got) != long {
		t.Fatalf("PeekRecord = %d bytes, %v; want the whole %d", len(got), err, len(long))
	}
	if err := os.Symlink(s.MetaPath("t1"), filepath.Join(dir, "t2.meta")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PeekRecord("t2", nil); err == nil {
		t.Error("PeekRecord followed a symlink")
	}
	if err := os.WriteFile(s.MetaPath("big"), make([]byte, MaxRecordBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PeekRecord("big", nil); err == nil {
		t.Error("PeekRecord read a record over the bound")
	}
}
