package records

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The testdata are real claude-code 2.1.197 records of one session, driven by
// hand in tmux against the stub model (tests/captures/notes-claude-codex.md),
// copied at each step (attachment listings and token usage trimmed). Each
// directory is the ~/.claude subtree at that moment:
//   - after400: the launch prompt, "hello one" and a pasted two-line
//     message, each answered by the stub's 400;
//   - midturn: then /nosuchcmd (rejected), /help (dialog, dismissed) and
//     "please fmhang now", held by the stub;
//   - queued: "queued while busy" typed during that turn (a queue-operation,
//     not yet a user record);
//   - interrupted-queued-sent: Escape; claude recorded the interruption and
//     sent the queued message, which the stub held too (its history carries
//     the hang word);
//   - rewound: Escape again; claude put "queued while busy" back into the
//     composer and wrote nothing (its session file turned idle);
//   - exited-busy: the composer cleared, "second hang" sent and taken back
//     by Escape, "third hang" sent, and /exit typed while it was held.
const claudeWorktree = "/tmp/cc/w_t.2"

// claudeHome builds a HOME whose ~/.claude is the named testdata snapshot.
func claudeHome(t *testing.T, snapshot string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.CopyFS(filepath.Join(home, ".claude"), os.DirFS(filepath.Join("testdata", "claude", snapshot))); err != nil {
		t.Fatal(err)
	}
	return home
}

func claudeRead(t *testing.T, home string) ([]string, bool) {
	t.Helper()
	return readRecord(t, "claude", Where{Home: home, Worktree: claudeWorktree})
}

// readRecord asks harness's reader both questions, failing t on any error.
func readRecord(t *testing.T, harness string, w Where) ([]string, bool) {
	t.Helper()
	if w.Query == nil {
		w.Query = execSQLite
	}
	r, err := For(harness, w)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := r.UserMessages()
	if err != nil {
		t.Fatal(err)
	}
	running, err := r.TurnRunning()
	if err != nil {
		t.Fatal(err)
	}
	return msgs, running
}

func TestClaudeRecords(t *testing.T) {
	first := []string{"Read the brief at /tmp/brief.md", "hello one", "line one of two\nline two of two"}
	hang := append(append([]string{}, first...), "please fmhang now")
	for _, tc := range []struct {
		snapshot string
		want     []string
		running  bool
	}{
		{"after400", first, false},
		{"midturn", hang, true},
		{"queued", hang, true},
		{"interrupted-queued-sent", append(hang[:len(hang):len(hang)], "queued while busy"), true},
		// The transcript still ends in the prompt Escape took back; only the
		// session file says the turn is over.
		{"rewound", append(hang[:len(hang):len(hang)], "queued while busy"), false},
		// "queued while busy" (taken back, then cleared) and "second hang"
		// (taken back) were received all the same; claude exited while
		// "third hang" was held, so no turn runs.
		{"exited-busy", append(hang[:len(hang):len(hang)], "queued while busy", "second hang", "third hang"), false},
	} {
		t.Run(tc.snapshot, func(t *testing.T) {
			msgs, running := claudeRead(t, claudeHome(t, tc.snapshot))
			if !reflect.DeepEqual(msgs, tc.want) {
				t.Errorf("UserMessages() = %q, want %q", msgs, tc.want)
			}
			if running != tc.running {
				t.Errorf("TurnRunning() = %v, want %v", running, tc.running)
			}
		})
	}
}

// claude writes a queue-operation "enqueue" with the text as it takes it
// during a turn, and the user record only when it sends it.
func TestClaudeEnqueuedMessages(t *testing.T) {
	for _, tc := range []struct {
		snapshot string
		want     []string
	}{
		{"midturn", nil},
		{"queued", []string{"queued while busy"}},
		{"interrupted-queued-sent", []string{"queued while busy"}},
	} {
		r, err := For("claude", Where{Home: claudeHome(t, tc.snapshot), Worktree: claudeWorktree})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.(Enqueuer).EnqueuedMessages()
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: EnqueuedMessages() = %q, %v, want %q", tc.snapshot, got, err, tc.want)
		}
	}
}

// claude keeps the slash commands it ran or refused as system records, not
// user messages: "/nosuchcmd" (informational "Unknown command") and
// "/help" (local_command), typed by hand in the midturn snapshot's session.
func TestClaudeCommands(t *testing.T) {
	r, err := For("claude", Where{Home: claudeHome(t, "midturn"), Worktree: claudeWorktree})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.(CommandRecorder).Commands()
	if want := []string{"/nosuchcmd", "/help"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Commands() = %q, %v, want %q", got, err, want)
	}
	for _, c := range []struct {
		content, want string
		ok            bool
	}{
		{"<command-name>/model</command-name>\n <command-message>model</command-message>\n <command-args>opus</command-args>", "/model opus", true},
		{"<local-command-stdout>Help dialog dismissed</local-command-stdout>", "", false},
	} {
		raw, _ := json.Marshal(c.content)
		got, ok := claudeCommand(claudeRecord{Type: "system", Subtype: "local_command", Content: raw})
		if got != c.want || ok != c.ok {
			t.Errorf("claudeCommand(%q) = %q %v, want %q %v", c.content, got, ok, c.want, c.ok)
		}
	}
}

// A transcript being appended to may end in half a line.
func TestClaudePartialLastLine(t *testing.T) {
	home := claudeHome(t, "midturn")
	files, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one transcript, got %q", files)
	}
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"parentUuid":"x","type":"user","message":{"role":"user","content":"half`)
	f.Close()
	msgs, running := claudeRead(t, home)
	if len(msgs) != 4 || msgs[3] != "please fmhang now" || !running {
		t.Errorf("got %q running=%v, want the midturn record unchanged", msgs, running)
	}
}

func TestClaudeNoRecordYet(t *testing.T) {
	msgs, running := claudeRead(t, t.TempDir())
	if len(msgs) != 0 || running {
		t.Errorf("empty HOME: got %q running=%v", msgs, running)
	}
}

func TestClaudeProjectDir(t *testing.T) {
	if got := claudeProjectDir("/tmp/cc/w_t.2"); got != "-tmp-cc-w-t-2" {
		t.Errorf("claudeProjectDir = %q", got)
	}
}

// claude shortens a project directory name over 200 characters and appends a
// hash of its own; the reader finds it by prefix and the transcript's cwd.
// long-worktree is a real launch (prompt and 400) in a 221-character worktree.
func TestClaudeLongWorktree(t *testing.T) {
	long := "/tmp/cc/" + strings.Repeat("verylongdirectoryname", 10) + "/wt"
	home := claudeHome(t, "long-worktree")
	msgs, running := readRecord(t, "claude", Where{Home: home, Worktree: long})
	if !reflect.DeepEqual(msgs, []string{"Read the brief at /tmp/brief.md"}) || running {
		t.Errorf("got %q running=%v, want the launch prompt, ended", msgs, running)
	}
	// Another worktree sharing the first 200 characters is not this one.
	other := long[:len(long)-2] + "xx"
	if msgs, _ := readRecord(t, "claude", Where{Home: home, Worktree: other}); len(msgs) != 0 {
		t.Errorf("worktree %s read another worktree's transcript: %q", other, msgs)
	}
}

// claude marks the cancel of a turn with a queued message waiting (its
// "[Request interrupted by user]" at 20:24:40.263); the Escape that took a
// prompt back into the composer (rewound) marks nothing new after it.
func TestClaudeCancelledSince(t *testing.T) {
	for _, c := range []struct {
		snapshot, at string
		want         bool
	}{
		{"interrupted-queued-sent", "2026-12-02T20:24:40.263Z", true},
		{"interrupted-queued-sent", "2026-12-02T20:24:39Z", true},
		{"interrupted-queued-sent", "2026-12-02T20:24:41Z", false},
		{"midturn", "2026-12-02T00:00:00Z", false},
		{"rewound", "2026-12-02T20:24:41Z", false},
	} {
		r, _ := For("claude", Where{Home: claudeHome(t, c.snapshot), Worktree: claudeWorktree})
		cm, ok := r.(CancelMarker)
		if !ok {
			t.Fatal("the claude reader marks no cancels")
		}
		at, _ := time.Parse(time.RFC3339Nano, c.at)
		if got, err := cm.CancelledSince(at); err != nil || got != c.want {
			t.Errorf("%s: CancelledSince(%s) = %v %v, want %v", c.snapshot, c.at, got, err, c.want)
		}
	}
}
