package records

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The testdata are real codex 0.171.0 rollouts of one session, driven by hand
// in tmux against the stub model (tests/captures/notes-claude-codex.md),
// copied at each step (strings over 120 characters and long lists trimmed,
// UserMessage lines kept whole). Each directory is the ~/.codex subtree:
//   - after-slash: the launch prompt, "hello one" and a pasted two-line
//     message, each ending in the stub's 400; then /nosuchcmd and /help
//     (both "Unrecognized command") and /status (run by codex);
//   - midturn: "please fmhang now", held by the stub. The copy taken after
//     "queued while busy" was typed during it is byte-identical;
//   - interrupted-two-queued: Escape sent "queued while busy" as a new turn
//     (held too: its history carries the hang word); "queued A" and
//     "queued B" typed during it; Escape again sent them as one message;
//   - interrupted: Escape on that turn, nothing queued;
//   - quit-busy: "busy again" cancelled through the C-c menu, then
//     "busy for quit" sent and /quit typed while it was held: the TUI left,
//     the daemon kept the turn.
const codexWorktree = "/tmp/cx/w_t.2"

func codexRead(t *testing.T, snapshot, worktree string) ([]string, bool) {
	t.Helper()
	home := t.TempDir()
	if snapshot != "" {
		if err := os.CopyFS(filepath.Join(home, ".codex"), os.DirFS(filepath.Join("testdata", "codex", snapshot))); err != nil {
			t.Fatal(err)
		}
	}
	return readRecord(t, "codex", Where{Home: home, Worktree: worktree})
}

func TestCodexRecords(t *testing.T) {
	first := []string{"Read the brief at /tmp/brief.md", "hello one", "line one of two\nline two of two"}
	upto := func(more ...string) []string {
		return append(append(append([]string{}, first...), "please fmhang now"), more...)
	}
	for _, tc := range []struct {
		snapshot string
		want     []string
		running  bool
	}{
		{"after-slash", first, false},
		{"midturn", upto(), true},
		{"interrupted-two-queued", upto("queued while busy", "queued A\nqueued B"), true},
		{"interrupted", upto("queued while busy", "queued A\nqueued B"), false},
		{"quit-busy", upto("queued while busy", "queued A\nqueued B", "busy again", "busy for quit"), true},
	} {
		t.Run(tc.snapshot, func(t *testing.T) {
			msgs, running := codexRead(t, tc.snapshot, codexWorktree)
			if !reflect.DeepEqual(msgs, tc.want) {
				t.Errorf("UserMessages() = %q, want %q", msgs, tc.want)
			}
			if running != tc.running {
				t.Errorf("TurnRunning() = %v, want %v", running, tc.running)
			}
		})
	}
}

// A rollout of another worktree under the same HOME is not this agent's.
func TestCodexOtherWorktree(t *testing.T) {
	msgs, running := codexRead(t, "midturn", "/tmp/cx/elsewhere")
	if len(msgs) != 0 || running {
		t.Errorf("got %q running=%v for a worktree with no session", msgs, running)
	}
}

func TestCodexNoRecordYet(t *testing.T) {
	msgs, running := codexRead(t, "", codexWorktree)
	if len(msgs) != 0 || running {
		t.Errorf("empty HOME: got %q running=%v", msgs, running)
	}
}

// A rollout being appended to may end in half a line.
func TestCodexPartialLastLine(t *testing.T) {
	home := t.TempDir()
	if err := os.CopyFS(filepath.Join(home, ".codex"), os.DirFS(filepath.Join("testdata", "codex", "after-slash"))); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one rollout, got %q", files)
	}
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"event_msg","payload":{"type":"task_started","turn_id":"x"`)
	f.Close()
	r, _ := For("codex", Where{Home: home, Worktree: codexWorktree})
	msgs, err := r.UserMessages()
	if err != nil || len(msgs) != 3 {
		t.Errorf("UserMessages() = %q, %v; want the three complete prompts", msgs, err)
	}
	if running, err := r.TurnRunning(); err != nil || running {
		t.Errorf("TurnRunning() = %v, %v; a half-written start does not count yet", running, err)
	}
}
