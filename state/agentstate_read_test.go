package state

import (
	"os"
	"path/filepath"
	"testing"
)

// The reader list and wait use: only the incarnation the record names, never
// through a link, never a malformed file.
func TestReadAgentStateOnlyForTheCurrentIncarnation(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(s.AgentStatePath("t1"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := s.ReadAgentState("t1", "s2.9"); ok {
		t.Fatal("no file read as a report")
	}
	write("state=busy\ngen=s2.9\nevent=prompt-submitted\nat=2026-12-02T21:00:00.123456789Z\nharness=claude\n")
	a, ok := s.ReadAgentState("t1", "s2.9")
	if !ok || a.State != ActivityBusy || a.Event != "prompt-submitted" || a.Harness != "claude" || a.At.Nanosecond() != 123456789 {
		t.Fatalf("read %+v ok=%v", a, ok)
	}
	if _, ok := s.ReadAgentState("t1", "s1.1"); ok {
		t.Fatal("another incarnation's report was read as this one's")
	}
	if _, ok := s.ReadAgentState("t1", ""); ok {
		t.Fatal("a record without spawn_gen matched a report")
	}
	for _, bad := range []string{"state=thinking\ngen=s2.9\n", "state=busy\n", "state=busy\ngen=s2.9\nat=yesterday\n"} {
		write(bad)
		if a, ok := s.ReadAgentState("t1", "s2.9"); ok {
			t.Errorf("%q read as %+v", bad, a)
		}
	}
}

func TestReadAgentStateRefusesALink(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("state=idle\ngen=s1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, s.AgentStatePath("t1")); err != nil {
		t.Fatal(err)
	}
	if a, ok := s.ReadAgentState("t1", "s1"); ok {
		t.Fatalf("read %+v through a symlink", a)
	}
}
