package records

import (
	"os"
	"path/filepath"
	"reflect"
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
