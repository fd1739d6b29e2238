package records

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The testdata files are real pi 0.73.1 session files, driven by hand against
// the stub model (see tests/captures/notes-opencode-pi-gemini.md):
//   - interrupted: "hello one" (400), a pasted three-line message (400),
//     /hotkeys (run by pi, not recorded), /nosuchcmd (sent to the model),
//     "please fmhang now" (held), "queued while busy" typed while held, then
//     Escape ("Operation aborted"; the queued text went back to the composer).
//   - busy: the same file copied while the fmhang turn was held, before and
//     after the queued message (byte-identical: a steer is not recorded).
//   - after400: the first prompt and its 400, a prefix of the same file.
//   - queued-delivered: a held turn whose stub went away; pi delivered the
//     queued steer, then gave up after three connection retries.
const piWorktree = "/tmp/opg/pi2/wt"

// piHome builds a HOME holding the named testdata sessions, in order.
func piHome(t *testing.T, dir string, names ...string) string {
	t.Helper()
	home := t.TempDir()
	sess := filepath.Join(home, ".pi", "agent", "sessions", dir)
	if err := os.MkdirAll(sess, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		data, err := os.ReadFile(filepath.Join("testdata", "pi", n+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		// pi names a session file by its start time; keep the given order.
		name := filepath.Join(sess, "2026-12-02T20-0"+string(rune('0'+i))+"-00-000Z_x.jsonl")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func TestPiRecords(t *testing.T) {
	all := []string{"hello one", "line one\nline two\n  indented three", "/nosuchcmd", "please fmhang now"}
	for _, c := range []struct {
		name    string
		wt      string
		want    []string
		running bool
	}{
		{"after400", piWorktree, all[:1], false},
		{"busy", piWorktree, all, true},
		{"interrupted", piWorktree, all, false},
		{"queued-delivered", "/tmp/opg/pi3/wt", []string{"please fmhang now", "queued while busy"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			msgs, running := readRecord(t, "pi", Where{Home: piHome(t, "--x--", c.name), Worktree: c.wt})
			if !reflect.DeepEqual(msgs, c.want) {
				t.Errorf("UserMessages = %q, want %q", msgs, c.want)
			}
			if running != c.running {
				t.Errorf("TurnRunning = %v, want %v", running, c.running)
			}
		})
	}
}

func TestPiOtherWorktreeAndNoSession(t *testing.T) {
	msgs, running := readRecord(t, "pi", Where{Home: piHome(t, "--x--", "busy"), Worktree: "/elsewhere"})
	if len(msgs) != 0 || running {
		t.Errorf("another worktree's session was read: %q running=%v", msgs, running)
	}
	msgs, running = readRecord(t, "pi", Where{Home: t.TempDir(), Worktree: piWorktree})
	if len(msgs) != 0 || running {
		t.Errorf("empty HOME: %q running=%v", msgs, running)
	}
}

// A relaunch starts a new session file: messages from both, in order, and
// the newest one decides whether a turn runs.
func TestPiRelaunchReadsEverySession(t *testing.T) {
	msgs, running := readRecord(t, "pi", Where{Home: piHome(t, "--x--", "after400", "busy"), Worktree: piWorktree})
	want := []string{"hello one", "hello one", "line one\nline two\n  indented three", "/nosuchcmd", "please fmhang now"}
	if !reflect.DeepEqual(msgs, want) || !running {
		t.Errorf("got %q running=%v, want %q running=true", msgs, running, want)
	}
	_, running = readRecord(t, "pi", Where{Home: piHome(t, "--x--", "busy", "after400"), Worktree: piWorktree})
	if running {
		t.Error("an older busy session made the newest, ended one read as running")
	}
}

// pi appends whole lines, but a reader can land between the bytes of one.
func TestPiHalfWrittenLastLine(t *testing.T) {
	home := piHome(t, "--x--", "after400")
	f, _ := filepath.Glob(filepath.Join(home, ".pi", "agent", "sessions", "*", "*.jsonl"))
	fh, err := os.OpenFile(f[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(`{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","te`)
	fh.Close()
	msgs, running := readRecord(t, "pi", Where{Home: home, Worktree: piWorktree})
	if !reflect.DeepEqual(msgs, []string{"hello one"}) || running {
		t.Errorf("got %q running=%v, want the complete lines only", msgs, running)
	}
}

// pi marks its Escape during a model call with an assistant message it
// stopped as "aborted" (interrupted.jsonl: the abort of "please fmhang now"
// is stamped 20:24:04.668); the three failed calls before it are no cancel.
func TestPiCancelledSince(t *testing.T) {
	r, _ := For("pi", Where{Home: piHome(t, "--x--", "interrupted"), Worktree: piWorktree})
	cm, ok := r.(CancelMarker)
	if !ok {
		t.Fatal("the pi reader marks no cancels")
	}
	for _, c := range []struct {
		at   string
		want bool
	}{{"2026-12-02T20:24:04.668Z", true}, {"2026-12-02T20:23:56Z", true}, {"2026-12-02T20:24:05Z", false}} {
		at, _ := time.Parse(time.RFC3339Nano, c.at)
		if got, err := cm.CancelledSince(at); err != nil || got != c.want {
			t.Errorf("CancelledSince(%s) = %v %v, want %v", c.at, got, err, c.want)
		}
	}
}
