package state

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeAgentState(t *testing.T, s Store, id, body string) {
	t.Helper()
	if err := os.WriteFile(s.AgentStatePath(id), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadAgentStateContract(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if _, err := s.ReadAgentState("t1"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("absent file: err = %v, want ErrNotExist", err)
	}
	writeAgentState(t, s, "t1", "state=busy\ngen=s1.2\nevent=prompt_submitted\nat=2026-12-02T21:00:00.123456789Z\nharness=claude\n")
	r, err := s.ReadAgentState("t1")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != AgentBusy || r.Gen != "s1.2" || r.Event != "prompt_submitted" || r.Harness != "claude" || r.At.Nanosecond() != 123456789 {
		t.Fatalf("read %+v", r)
	}
	for body, want := range map[string]string{
		"state=thinking\ngen=s1\n":           "not one of",
		"state=busy\n":                       "no gen=",
		"state=busy\ngen=s1\nat=yesterday\n": "not an RFC 3339 time",
		"garbage\n":                          "malformed",
	} {
		writeAgentState(t, s, "t1", body)
		if _, err := s.ReadAgentState("t1"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
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
	if _, err := s.ReadAgentState("t1"); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("err = %v, want a symlink refusal", err)
	}
}

func TestCurrentAgentReportIgnoresAnotherIncarnation(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	rec := Record{Entries: []Entry{{"spawn_gen", "s2.9"}}}
	if _, ok, err := s.CurrentAgentReport("t1", rec); ok || err != nil {
		t.Fatalf("no file: ok=%v err=%v", ok, err)
	}
	writeAgentState(t, s, "t1", "state=busy\ngen=s1.1\n")
	if _, ok, err := s.CurrentAgentReport("t1", rec); ok || err != nil {
		t.Fatalf("stale gen: ok=%v err=%v, want not current", ok, err)
	}
	if _, ok, _ := s.CurrentAgentReport("t1", Record{}); ok {
		t.Fatal("a record without spawn_gen matched a report")
	}
	writeAgentState(t, s, "t1", "state=ready\ngen=s2.9\n")
	r, ok, err := s.CurrentAgentReport("t1", rec)
	if !ok || err != nil || r.Activity() != "idle" {
		t.Fatalf("current: %+v ok=%v err=%v, want activity idle", r, ok, err)
	}
	writeAgentState(t, s, "t1", "state=nonsense\ngen=s2.9\n")
	if _, _, err := s.CurrentAgentReport("t1", rec); err == nil {
		t.Fatal("an unreadable file was not reported")
	}
}

func TestActivity(t *testing.T) {
	for state, want := range map[string]string{"ready": "idle", "idle": "idle", "busy": "busy", "waiting": "waiting", "ended": "unknown"} {
		if got := (AgentReport{State: state}).Activity(); got != want {
			t.Errorf("%s: activity %s, want %s", state, got, want)
		}
	}
}
