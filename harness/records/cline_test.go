package records

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The testdata directories are real cline 3.0.65 session directories, driven
// by hand in tmux against the stub model (tests/captures/notes-cline.md):
//   - interrupted: the launch prompt (answered), "stream fmlong20 2b2b"
//     (answered), "wait here fmhang 3c3c" and "stream fmlong30 4d4d"
//     (each cancelled with Escape: no answer, no marker), "hold fmhang
//     5e5e" with "queued while busy" typed during it (Escape; the queued
//     text was then sent and answered), "hold again fmhang 6f6f" (Escape),
//     then /exit (status "completed");
//   - tool: "do it fmtool ..." with auto-approve (a run_commands call and
//     an editor call, their tool_result user messages, a reply);
//   - permission-denied: the same with --auto-approve false, each call
//     denied with Escape at cline's dialog; the turn went on to its reply;
//   - busy: that session copied while "please fmhang now 9c9c" was held:
//     status "running", and the prompt not yet in messages.json.
const clineWorktree = "/tmp/cline-x/wt"

// clineHome lays out a HOME holding the named testdata sessions.
func clineHome(t *testing.T, names ...string) string {
	t.Helper()
	home := t.TempDir()
	for _, n := range names {
		src := filepath.Join("testdata", "cline", n)
		files, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			id := f.Name()[:len("1796520007433_r53h5")]
			dir := filepath.Join(home, ".cline", "data", "sessions", id)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(src, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return home
}

func TestClineRecords(t *testing.T) {
	launch := "Read the brief at /tmp/fmagents-lab/fmhome/data/t1/brief.md and follow it exactly."
	interrupted := []string{launch, "stream fmlong20 2b2b", "wait here fmhang 3c3c", "stream fmlong30 4d4d",
		"hold fmhang 5e5e", "queued while busy", "hold again fmhang 6f6f"}
	tool := []string{"do it fmtool /tmp/cline-x/tooldir now"}
	ask := []string{"ask fmtool /tmp/cline-x/tooldir now"}
	for _, c := range []struct {
		name     string
		sessions []string
		want     []string
		running  bool
	}{
		{"interrupted", []string{"interrupted"}, interrupted, false},
		{"tool", []string{"tool"}, tool, false},
		{"permission-denied", []string{"permission-denied"}, ask, false},
		{"busy", []string{"busy"}, ask, true},
		// Sessions of one worktree are read oldest first; the newest
		// decides whether a turn runs.
		{"relaunched", []string{"interrupted", "tool", "busy"}, append(append(append([]string(nil), interrupted...), tool...), ask...), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			msgs, running := readRecord(t, "cline", Where{Home: clineHome(t, c.sessions...), Worktree: clineWorktree})
			if !reflect.DeepEqual(msgs, c.want) {
				t.Errorf("UserMessages = %q, want %q", msgs, c.want)
			}
			if running != c.running {
				t.Errorf("TurnRunning = %v, want %v", running, c.running)
			}
		})
	}
}

func TestClineOtherWorktreeAndNoSession(t *testing.T) {
	msgs, running := readRecord(t, "cline", Where{Home: clineHome(t, "busy"), Worktree: "/elsewhere"})
	if len(msgs) != 0 || running {
		t.Errorf("another worktree's session was read: %q running=%v", msgs, running)
	}
	msgs, running = readRecord(t, "cline", Where{Home: t.TempDir(), Worktree: clineWorktree})
	if len(msgs) != 0 || running {
		t.Errorf("empty HOME: %q running=%v", msgs, running)
	}
}

// cline wires no hooks; its newest session's status is its own word for
// what it does: running is busy, idle idle, and a status that names no
// activity (the exited session's) says nothing.
func TestClineActivity(t *testing.T) {
	for _, c := range []struct {
		sessions []string
		want     string
	}{
		{[]string{"busy"}, "busy"},
		{[]string{"tool"}, "idle"},
		{[]string{"interrupted"}, ""},
		// A session whose newest turn failed says "failed": over, idle.
		{[]string{"failed"}, "idle"},
		{[]string{"interrupted", "tool", "busy"}, "busy"},
		{nil, ""},
	} {
		r, err := For("cline", Where{Home: clineHome(t, c.sessions...), Worktree: clineWorktree})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.(SessionStatus).Activity()
		if err != nil || got != c.want {
			t.Errorf("%v: Activity() = %q, %v, want %q", c.sessions, got, err, c.want)
		}
	}
}

// testdata/cline/failed is a real session of the tier's turns group: its
// newest turn was rate-limited for good, and cline wrote the error as an
// assistant message marked displayRole "error"; that turn failed, it did
// not complete.
func TestClineFailedTurn(t *testing.T) {
	r, err := For("cline", Where{Home: clineHome(t, "failed"), Worktree: clineWorktree})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := r.(interface{ Entries() ([]Entry, error) }).Entries()
	if err != nil {
		t.Fatal(err)
	}
	var ends []Outcome
	for _, e := range entries {
		if e.Kind == EntryTurnEnd {
			ends = append(ends, e.End)
		}
		if e.Kind == EntryReply && strings.Contains(e.Text, "rate-limit") {
			t.Errorf("the error was read as the model's reply: %q", e.Text)
		}
	}
	want := []Outcome{Completed, Completed, Completed, Failed, Completed, Completed, Failed}
	if !reflect.DeepEqual(ends, want) {
		t.Errorf("turn ends = %v, want %v", ends, want)
	}
	if last := entries[len(entries)-1]; last.End != Failed || last.Text != "fmctl stub model: rate-limit" {
		t.Errorf("the last entry = %+v, want the failed end with cline's error", last)
	}
}

// withClineLog puts the committed log name in home as cline's own, and
// reads the worktree's sessions there.
func withClineLog(t *testing.T, home, name string) Reader {
	t.Helper()
	dir := filepath.Join(home, ".cline", "data", "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "cline", "logs", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cline.log"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := For("cline", Where{Home: home, Worktree: clineWorktree})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// testdata/cline/race is a real session pair of the tier's basic group,
// and logs/cline.log its log's submissions and runs' starts: "first
// message right after spawn" (38) was queued behind the launch turn; as it
// was taken off the queue (logged immediate) the next send's "message 1
// of five" (24) was logged immediate too, one run started, and cline ran
// the queued one and dropped message 1 for good (no record, no model call).
// It then started a new session carrying the old one's messages over, in
// which messages 2 to 5 and the rest were taken one by one.
func TestClineSubmissions(t *testing.T) {
	home := clineHome(t, "race")
	r := withClineLog(t, home, "cline.log")
	subs, err := r.(SubmitLogger).Submissions()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range subs {
		mark := map[bool]string{true: "q"}[s.Queued] + map[bool]string{true: "s"}[s.Started]
		got = append(got, fmt.Sprintf("%d%s", s.Length, mark))
	}
	// s: its run started; the two immediate prompts with one start between
	// them have none.
	want := []string{"95s", "38q", "38", "24", "24s", "24s", "24s", "24s", "35s", "4096s", "20480s", "10s", "31s"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Submissions = %v, want %v", got, want)
	}
	if subs[0].Time.IsZero() {
		t.Error("a submission lost its time")
	}
	// Live: the new session's, the worktree's newest, from its first
	// prompt on; the old one's are not.
	var live []bool
	for _, s := range subs {
		live = append(live, s.Live)
	}
	if wantLive := []bool{false, false, false, false, true, true, true, true, true, true, true, true, true}; !reflect.DeepEqual(live, wantLive) {
		t.Errorf("Live = %v, want %v", live, wantLive)
	}
	// The one-pass sheet fm-send polls holds the same as the two reads.
	sh, err := r.(SheetReader).Sheet()
	msgs, _ := r.UserMessages()
	if err != nil || !reflect.DeepEqual(sh.Submissions, subs) || !reflect.DeepEqual(sh.Messages, msgs) || len(msgs) == 0 {
		t.Errorf("Sheet = %+v, %v; want messages %q and the submissions above", sh, err, msgs)
	}
	// No log yet (a session that has not logged): no submissions, no error.
	r, _ = For("cline", Where{Home: clineHome(t, "race"), Worktree: clineWorktree})
	if subs, err := r.(SubmitLogger).Submissions(); err != nil || len(subs) != 0 {
		t.Errorf("without a log: %v, %v", subs, err)
	}
}

// The session cline started after the dropped prompt carries the old one's
// messages over under the same ids: each is one message, read once.
func TestClineCarriedOverMessagesReadOnce(t *testing.T) {
	msgs, _ := readRecord(t, "cline", Where{Home: clineHome(t, "race"), Worktree: clineWorktree})
	counts := map[string]int{}
	for _, m := range msgs {
		counts[m]++
	}
	for m, n := range counts {
		if n > 1 {
			t.Errorf("%q read %d times", m, n)
		}
	}
	if counts["first message right after spawn 3b86c7"] != 1 || counts["message 1 of five cd1760"] != 0 || counts["message 2 of five f99a92"] != 1 {
		t.Errorf("UserMessages = %q", msgs)
	}
}

// A session whose first turn has not ended has no messages.json yet: its
// launch prompt is in the session file alone, written as cline created the
// session (a relaunch into an outage, whose launch turn never ends).
func TestClineLaunchPromptBeforeTheFirstTurnEnds(t *testing.T) {
	home := clineHome(t, "failed")
	files, _ := filepath.Glob(filepath.Join(home, ".cline", "data", "sessions", "*", "*.messages.json"))
	if len(files) != 1 {
		t.Fatalf("messages files: %v", files)
	}
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	msgs, _ := readRecord(t, "cline", Where{Home: home, Worktree: clineWorktree})
	want := []string{"Read the brief at /tmp/fmagents-lab/fmhome/data/t1/brief.md and follow it exactly."}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("UserMessages = %q, want %q", msgs, want)
	}
}

// testdata/cline/hub is a session a second TUI ran on the hub its HOME's
// first TUI started (by hand, tests/captures/notes-cline.md): "second one"
// answered, then "third one sent later" answered; hub-events.sql holds the
// hub's event log of it, its run starts and the beforeRun snapshots. The
// hub writes messages.json only when a turn ends: during the second turn
// it held only "second one", and the newest snapshot is what shows the
// prompt at its submit.
func TestClineHubHostedSession(t *testing.T) {
	home := clineHome(t, "hub")
	loadSQLite(t, filepath.Join(home, ".cline", "data", "db", clineHubEvents), nil,
		filepath.Join("testdata", "cline", "hub-events.sql"))
	// The second turn running: messages.json as the first turn's end left it.
	msgsPath := filepath.Join(home, ".cline", "data", "sessions", "1796578191416_ea84u", "1796578191416_ea84u.messages.json")
	var m map[string]any
	data, _ := os.ReadFile(msgsPath)
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["messages"] = m["messages"].([]any)[:2]
	data, _ = json.Marshal(m)
	if err := os.WriteFile(msgsPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w := Where{Home: home, Worktree: clineWorktree, Query: execSQLite}
	msgs, _ := readRecord(t, "cline", w)
	want := []string{"second one", "third one sent later"}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("UserMessages = %q, want %q", msgs, want)
	}
	// No SQLite reader, and a hub log to read: an error, never a record
	// that seems to lack the prompt.
	r, _ := For("cline", Where{Home: home, Worktree: clineWorktree})
	if _, err := r.UserMessages(); err == nil {
		t.Error("a hub log read without a SQLite reader gave no error")
	}
}

// The tier's outage lab, cline 3.0.65: eight texts queued behind a turn
// the model API never answers (five of 37 units, three of 38), then an
// interrupt. cline sent the queue's head as a turn of its own and dropped
// the other seven, logging nothing of them; the next prompt (27 units)
// shows the queue gone. Three more of 38 were queued behind that turn
// and interrupted alike. Only the two heads reached the record, and a
// later 38 sent from the queue is no proof of an earlier one let go.
func TestClineQueueLetGoAfterAnInterrupt(t *testing.T) {
	home := clineHome(t, "letgo")
	r := withClineLog(t, home, "letgo.log")
	subs, err := r.(SubmitLogger).Submissions()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range subs {
		mark := fmt.Sprint(s.Length)
		for _, f := range []struct {
			on   bool
			mark string
		}{{s.Queued, "q"}, {s.Started, "s"}, {s.Dequeued, "<"}, {s.Sent, "+"}, {s.Dropped, "x"}} {
			if f.on {
				mark += f.mark
			}
		}
		got = append(got, mark)
	}
	// q queued, s its run started, < a queued one sent, + a queued one's
	// sending ran, x a queued one let go.
	want := []string{"95s", "40s",
		"37q+", "37qx", "37qx", "37qx", "37qx", "38qx", "38qx", "38qx", "37s<",
		"27s", "38q+", "38qx", "38qx", "38s<", "27s"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Submissions =\n%v, want\n%v", got, want)
	}
	msgs, err := r.UserMessages()
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, m := range msgs {
		held[m] = true
	}
	if !held["sent into the outage 1 of five 803eb1"] || !held["queued in the outage 1 of three 89ffbd"] || len(msgs) != 6 {
		t.Errorf("UserMessages = %q: want the two heads the queue sent among 6", msgs)
	}
}
