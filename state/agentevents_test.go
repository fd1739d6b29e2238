package state

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// eventsStore is a store with task t1's key and an empty events directory.
func eventsStore(t *testing.T) (Store, string) {
	t.Helper()
	s := Store{Dir: t.TempDir()}
	if err := s.WriteEventKey("t1", "k1"); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetAgentEvents("t1"); err != nil {
		t.Fatal(err)
	}
	return s, s.AgentEventsDir("t1")
}

// hookFile writes what a bash hook writes: one line named by its at.
func hookFile(t *testing.T, dir, gen, event string, at time.Time, key string) string {
	t.Helper()
	stamp := fmt.Sprintf("%d.%06d", at.Unix(), at.Nanosecond()/1000)
	name := stamp + ".4242"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("%s %s %s %s\n", gen, event, stamp, key)), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// A bash hook's events are folded over the agent-state file's report in
// the order of their clock: newer ones move the state and the turn, older
// ones (the report already said more) and another incarnation's say
// nothing.
func TestReadAgentStateFoldsTheHooksEventsNewerThanTheReport(t *testing.T) {
	s, dir := eventsStore(t)
	t0 := time.Date(2026, 12, 8, 1, 0, 0, 0, time.UTC)
	base := AgentState{State: ActivityIdle, Gen: "s2.9", Event: "turn-finished", At: t0, Harness: "gemini", Turn: t0.Add(-time.Minute)}
	if err := os.WriteFile(s.AgentStatePath("t1"), base.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	hookFile(t, dir, "s2.9", "prompt-submitted", t0.Add(-time.Second), "k1") // older than the report
	hookFile(t, dir, "s1.1", "waiting", t0.Add(3*time.Second), "k1")         // another incarnation's
	a, ok := s.ReadAgentState("t1", "s2.9")
	if !ok || a.State != ActivityIdle || !a.At.Equal(t0) {
		t.Fatalf("older and stale events moved the report: %+v", a)
	}
	hookFile(t, dir, "s2.9", "turn-finished", t0.Add(2*time.Second), "k1")
	hookFile(t, dir, "s2.9", "prompt-submitted", t0.Add(1*time.Second), "k1")
	a, ok = s.ReadAgentState("t1", "s2.9")
	if !ok || a.State != ActivityIdle || a.Event != "turn-finished" || !a.At.Equal(t0.Add(2*time.Second)) || !a.Turn.Equal(t0.Add(time.Second)) || a.Harness != "gemini" {
		t.Fatalf("fold = %+v, want idle at +2s in the turn begun at +1s", a)
	}
	// Without a report, the events alone are the state.
	if err := os.Remove(s.AgentStatePath("t1")); err != nil {
		t.Fatal(err)
	}
	if a, ok = s.ReadAgentState("t1", "s2.9"); !ok || a.State != ActivityIdle || !a.Turn.Equal(t0.Add(time.Second)) {
		t.Fatalf("events alone = %+v ok=%v", a, ok)
	}
}

// An event without the task's key is a forgery: it changes nothing, and
// the read that finds it counts it as a refused event and removes it.
func TestAForgedEventIsRefusedCountedAndRemoved(t *testing.T) {
	s, dir := eventsStore(t)
	at := time.Now().Add(-time.Second)
	hookFile(t, dir, "g1", "prompt-submitted", at, "k1")
	hookFile(t, dir, "g1", "turn-finished", at.Add(time.Millisecond), "stolen")
	hookFile(t, dir, "g1", "waiting", at.Add(2*time.Millisecond), "")
	a, ok := s.ReadAgentState("t1", "g1")
	if !ok || a.State != ActivityBusy {
		t.Fatalf("forgeries moved the state: %+v ok=%v", a, ok)
	}
	if n := s.RefusedEvents("t1"); n != 1 {
		t.Fatalf("refused events = %d, want 1 (the keyless line is malformed, not a report)", n)
	}
	log, _ := os.ReadFile(s.EventRefusedPath("t1"))
	if !strings.Contains(string(log), "event=turn-finished reason=wrong-key") {
		t.Fatalf("refused log %q", log)
	}
	// The refusals are gone, the fold kept as a snapshot, and a second
	// read counts nothing twice.
	if got := listDir(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], snapshotPrefix) {
		t.Fatalf("directory after the compaction: %q", got)
	}
	if a, ok = s.ReadAgentState("t1", "g1"); !ok || a.State != ActivityBusy || s.RefusedEvents("t1") != 1 {
		t.Fatalf("after the compaction: %+v ok=%v refused=%d", a, ok, s.RefusedEvents("t1"))
	}
	// A snapshot is taken only with the key too.
	if err := os.WriteFile(filepath.Join(dir, snapshotPrefix+"9"), []byte(AgentState{State: ActivityIdle, Gen: "g1", Event: "turn-finished", At: time.Now()}.Bytes()), 0o644); err != nil {
		t.Fatal(err)
	}
	if a, _ = s.ReadAgentState("t1", "g1"); a.State != ActivityBusy {
		t.Fatalf("a keyless snapshot was taken: %+v", a)
	}
}

// A file whose name no hook or compaction gives is none of the reader's:
// never read, never removed.
func TestAForeignFileInTheEventsDirectoryIsLeftAlone(t *testing.T) {
	s, dir := eventsStore(t)
	at := time.Now().Add(-time.Minute)
	hookFile(t, dir, "g1", "prompt-submitted", at, "k1")
	for _, name := range []string{"notes.txt", "1.000001", "snapshot-x", "12.34.5"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("g1 turn-finished 1.000001 k1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hookFile(t, dir, "g0", "waiting", at.Add(time.Second), "k1") // another generation's: the reader's to remove
	a, ok := s.ReadAgentState("t1", "g1")
	if !ok || a.State != ActivityBusy {
		t.Fatalf("read %+v ok=%v", a, ok)
	}
	if got := listDir(t, dir); len(got) != 5 {
		t.Fatalf("after the compaction: %q, want the four foreign files and one snapshot", got)
	}
}

// Past eventsCompactAt files a read leaves one snapshot that reads the
// same, so a long session's reads stay a few small reads.
func TestManyEventsAreCompactedIntoOneSnapshotThatReadsTheSame(t *testing.T) {
	s, dir := eventsStore(t)
	at := time.Now().Add(-time.Hour)
	for i := range 10 {
		hookFile(t, dir, "g1", "prompt-submitted", at.Add(time.Duration(2*i)*time.Second), "k1")
		hookFile(t, dir, "g1", "turn-finished", at.Add(time.Duration(2*i+1)*time.Second), "k1")
	}
	before, ok := s.ReadAgentState("t1", "g1")
	if !ok || before.State != ActivityIdle || !before.Turn.Equal(at.Add(18*time.Second).Truncate(time.Microsecond)) {
		t.Fatalf("fold = %+v", before)
	}
	if got := listDir(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], snapshotPrefix) {
		t.Fatalf("not compacted: %q", got)
	}
	after, ok := s.ReadAgentState("t1", "g1")
	if !ok || after.State != before.State || after.Event != before.Event || !after.At.Equal(before.At) || !after.Turn.Equal(before.Turn) {
		t.Fatalf("the snapshot reads %+v, the events read %+v", after, before)
	}
	hookFile(t, dir, "g1", "prompt-submitted", at.Add(time.Minute), "k1")
	if a, _ := s.ReadAgentState("t1", "g1"); a.State != ActivityBusy || !a.Turn.Equal(at.Add(time.Minute).Truncate(time.Microsecond)) {
		t.Fatalf("an event after the snapshot: %+v", a)
	}
}

// A file the hook's shell has created but not yet written is left alone
// (its line is on the way); one left unwritten long past that is a write
// that died, and goes, as does one larger than any hook writes.
func TestAHalfWrittenEventWaitsAndADeadOneGoes(t *testing.T) {
	s, dir := eventsStore(t)
	now := time.Now()
	hookFile(t, dir, "g1", "prompt-submitted", now.Add(-time.Second), "k1")
	writing := filepath.Join(dir, "1.000001.1")
	if err := os.WriteFile(writing, []byte("g1 turn-fin"), 0o644); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, "1.000002.2")
	if err := os.WriteFile(dead, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "1.000003.3")
	if err := os.WriteFile(huge, []byte(strings.Repeat("x", maxEventFile+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	old := now.Add(-time.Minute)
	if err := os.Chtimes(dead, old, old); err != nil {
		t.Fatal(err)
	}
	if a, ok := s.ReadAgentState("t1", "g1"); !ok || a.State != ActivityBusy {
		t.Fatalf("read %+v ok=%v", a, ok)
	}
	if _, err := os.Lstat(writing); err != nil {
		t.Fatalf("a file being written was removed: %v", err)
	}
	if _, err := os.Lstat(dead); err == nil {
		t.Fatal("a dead write was kept")
	}
	if _, err := os.Lstat(huge); err == nil {
		t.Fatal("a file larger than any hook writes was kept")
	}
}

// Nothing in the directory is followed: a symlink there is removed, never
// read, and what it points at stays.
func TestAnEventsDirectoryLinkIsNeverFollowed(t *testing.T) {
	s, dir := eventsStore(t)
	target := filepath.Join(t.TempDir(), "elsewhere")
	at := time.Now()
	if err := os.WriteFile(target, []byte(fmt.Sprintf("g1 waiting %d.%06d k1\n", at.Unix(), at.Nanosecond()/1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "1.000001.1")); err != nil {
		t.Fatal(err)
	}
	if a, ok := s.ReadAgentState("t1", "g1"); ok {
		t.Fatalf("read %+v through a link", a)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the link's target went: %v", err)
	}
	// A directory linked in the events directory's place is not read, and
	// nothing in it is removed, whatever it holds.
	elsewhere := t.TempDir()
	stamp := fmt.Sprintf("%d.%06d", at.Unix(), at.Nanosecond()/1000)
	for name, body := range map[string]string{stamp + ".1": "g1 waiting " + stamp + " k1\n", "1.000001.2": "not a line\n", "notes.txt": "the user's\n"} {
		if err := os.WriteFile(filepath.Join(elsewhere, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	if a, ok := s.ReadAgentState("t1", "g1"); ok {
		t.Fatalf("read %+v through a linked directory", a)
	}
	if got := listDir(t, elsewhere); len(got) != 3 {
		t.Fatalf("the linked directory lost files: %q", got)
	}
	// Resetting for a new incarnation replaces a linked directory itself.
	other := t.TempDir()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, dir); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetAgentEvents("t1"); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(dir); err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 {
		t.Fatalf("reset directory: %v %v", info, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("the linked directory went: %v", err)
	}
}

func TestEpochRealtimeIsReadInEitherLocale(t *testing.T) {
	for _, v := range []string{"1765155600.123456", "1765155600,123456"} {
		at, err := parseEpochRealtime(v)
		if err != nil || at.Unix() != 1765155600 || at.Nanosecond() != 123456000 {
			t.Errorf("%s: %v %v", v, at, err)
		}
	}
	for _, v := range []string{"", "1765155600", "1765155600.12", "-1.000000", "x.123456"} {
		if _, err := parseEpochRealtime(v); err == nil {
			t.Errorf("%q read as a time", v)
		}
	}
}
