package state

import (
	"os"
	"testing"
	"time"
)

func TestTypedRecordTellsOwnTextFromADraft(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if _, ok := s.ReadTyped("t1"); ok {
		t.Fatal("a task never typed into has a typed record")
	}
	// No record: an interrupt has nothing to mark, and writes nothing.
	if err := s.MarkInterrupted("t1", time.Unix(10, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.TypedPath("t1")); err == nil {
		t.Fatal("an interrupt with no typed record wrote one")
	}
	at := time.Unix(1_800_000_000, 5)
	if err := s.RecordTyped("t1", Typed{At: at.UnixNano(), Digest: "d1", Submitted: true}); err != nil {
		t.Fatal(err)
	}
	typed, ok := s.ReadTyped("t1")
	if !ok {
		t.Fatal("the typed record does not read back")
	}
	// Still drawn after its submit: fmctl's own, waited out, never cleared.
	if got := typed.Owns("d1"); got != OwnSubmitted {
		t.Errorf("submitted text held again with no interrupt = %q, want %q", got, OwnSubmitted)
	}
	if got := typed.Owns("other"); got != "" {
		t.Errorf("other text = %q, want a draft", got)
	}
	// An interrupt older than the text cancelled nothing of it.
	if err := s.MarkInterrupted("t1", at.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if typed, _ = s.ReadTyped("t1"); typed.Owns("d1") != OwnSubmitted {
		t.Error("an interrupt before the text counts as its restore")
	}
	if err := s.MarkInterrupted("t1", at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if typed, _ = s.ReadTyped("t1"); typed.Owns("d1") != OwnRestored || typed.Owns("other") != "" {
		t.Errorf("after an interrupt: own=%q other=%q", typed.Owns("d1"), typed.Owns("other"))
	}
	if err := s.RecordTyped("t1", Typed{At: at.UnixNano(), Digest: "d2"}); err != nil {
		t.Fatal(err)
	}
	if typed, _ = s.ReadTyped("t1"); typed.Owns("d2") != OwnLeftover || typed.Owns("") != "" {
		t.Errorf("text never let go of: own=%q empty=%q", typed.Owns("d2"), typed.Owns(""))
	}
	// The launch prompt, round-tripped: the launch's own, not a draft,
	// until an interrupt fmctl sent could have put it back.
	if err := s.RecordTyped("t1", Typed{At: at.UnixNano(), Digest: "d3", Submitted: true, Launch: true}); err != nil {
		t.Fatal(err)
	}
	if typed, _ = s.ReadTyped("t1"); typed.Owns("d3") != OwnLaunch || typed.Owns("d2") != "" {
		t.Errorf("launch prompt: own=%q other=%q", typed.Owns("d3"), typed.Owns("d2"))
	}
	if typed.Interrupted = at.UnixNano() + 1; typed.Owns("d3") != OwnRestored {
		t.Errorf("launch prompt after an interrupt: own=%q", typed.Owns("d3"))
	}
	for _, junk := range []string{"", "{}", `{"at":5}`, `{"digest":"d"}`, "not json"} {
		if err := os.WriteFile(s.TypedPath("t1"), []byte(junk), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.ReadTyped("t1"); ok {
			t.Errorf("typed record %q reads as one", junk)
		}
	}
}
