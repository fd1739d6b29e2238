package records

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The testdata files are real qwen-code 0.15.10 transcripts, driven by hand
// in tmux against the stub model (tests/captures/notes-qwen.md), but for
// session-stream-cancelled, from the real-agent tier's qwen interrupts
// group (its paths renamed to the others'):
//   - session-stream-cancelled: the launch prompt (answered), "a turn to
//     cancel at once fmhang" (aborted), "stream until stopped fmlong60"
//     stopped by Escape as it streamed (line 11), the next prompt;
//   - session-turns: "hello there" (answered), "please fmhang now"
//     (held, then Escape: its api_error "Request was aborted."), "please
//     fmrate2 now" (two 429s retried, answered), "please fmtool ..." (a
//     shell call and a write, answered), then a call qwen refused;
//   - session-tool-cancelled: Escape while the shell tool ran;
//   - session-queued: "queued one", typed during "please fmlong8 now" and
//     sent when it ended; "queued while busy", typed during "please fmhang
//     busy", came back into the composer on Escape and was cleared unsent.
//
// A prefix of a transcript is the file as it stood at that line: qwen only
// appends.
const qwenWorktree = "/work/.cache-qwen/lab1/wt"

// qwenHome lays out a HOME holding the named transcripts, each cut to its
// first lines (0 = whole), written in order.
func qwenHome(t *testing.T, files map[string]int, order ...string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".qwen", "projects", "-work--cache-qwen-lab1-wt", "chats")
	layRecords(t, "qwen", files, order, func(name string) string { return filepath.Join(dir, name+".jsonl") })
	return home
}

// layRecords writes each named testdata/<harness>/<name>.jsonl to where(name),
// cut to its first files[name] lines (0 = whole), the later in order the
// newer: a prefix of an append-only record is the record as it stood then.
func layRecords(t *testing.T, harness string, files map[string]int, order []string, where func(name string) string) {
	t.Helper()
	at := time.Now().Add(-time.Hour)
	for i, name := range order {
		data, err := os.ReadFile(filepath.Join("testdata", harness, name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if n := files[name]; n > 0 {
			data = bytes.Join(bytes.SplitAfter(data, []byte("\n"))[:n], nil)
		}
		p := where(name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		stamp := at.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
}

func TestQwenUserMessagesEachOnce(t *testing.T) {
	home := qwenHome(t, nil, "session-turns", "session-queued")
	msgs, _ := readRecord(t, "qwen", Where{Home: home, Worktree: qwenWorktree})
	want := []string{"hello there", "please fmhang now", "please fmrate2 now", "please fmtool /tmp/qwt now",
		"please fmtool20 /tmp/qwt now", "please fmtool /tmp/qwt now", "please fmlong8 now", "queued one",
		"please fmhang x", "please fmhang busy", "please fmhang two", "please fmtool /tmp/qwt perm"}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("UserMessages = %q, want %q", msgs, want)
	}
	// Another worktree's transcripts are not this one's.
	if msgs, _ := readRecord(t, "qwen", Where{Home: home, Worktree: "/work/other"}); len(msgs) != 0 {
		t.Errorf("another worktree read %q", msgs)
	}
}

func TestQwenTurnRunning(t *testing.T) {
	for _, c := range []struct {
		name    string
		lines   int
		running bool
	}{
		{"session-turns", 2, true},  // the prompt, its request out
		{"session-turns", 4, false}, // answered
		{"session-turns", 7, true},  // "please fmhang now" held
		{"session-turns", 8, false}, // Escape: the request aborted
		{"session-turns", 10, true}, // fmrate2 in its back-off: nothing recorded yet
		{"session-turns", 17, true}, // an answer calling the shell tool
		{"session-turns", 19, true}, // its result, going back to the model
		{"session-turns", 0, false}, // every turn over
		{"session-tool-cancelled", 4, true},
		{"session-tool-cancelled", 0, false},    // Escape cancelled the tool
		{"session-queued", 21, true},            // "please fmhang busy" held
		{"session-queued", 22, false},           // cancelled; the queued text unsent
		{"session-stream-cancelled", 10, true},  // "stream until stopped fmlong60" streaming
		{"session-stream-cancelled", 11, false}, // Escape: its api_response with no text, no tokens
		{"session-stream-cancelled", 3, true},   // a whole answer's api_response, before its assistant line
	} {
		home := qwenHome(t, map[string]int{c.name: c.lines}, c.name)
		if _, running := readRecord(t, "qwen", Where{Home: home, Worktree: qwenWorktree}); running != c.running {
			t.Errorf("%s to line %d: TurnRunning = %v, want %v", c.name, c.lines, running, c.running)
		}
	}
	// The newest session is the live one.
	home := qwenHome(t, nil, "session-tool-cancelled", "session-turns")
	if _, running := readRecord(t, "qwen", Where{Home: home, Worktree: qwenWorktree}); running {
		t.Error("an ended newest session reads as running")
	}
}

func TestQwenCancelledSince(t *testing.T) {
	home := qwenHome(t, map[string]int{"session-turns": 8}, "session-turns")
	r, _ := For("qwen", Where{Home: home, Worktree: qwenWorktree})
	cm, ok := r.(CancelMarker)
	if !ok {
		t.Fatal("the qwen reader marks no cancels")
	}
	// The abort of "please fmhang now" is stamped 22:04:56.407.
	for _, c := range []struct {
		at   string
		want bool
	}{{"2026-12-05T22:04:56.407Z", true}, {"2026-12-05T22:04:50Z", true}, {"2026-12-05T22:04:57Z", false}} {
		at, _ := time.Parse(time.RFC3339Nano, c.at)
		if got, err := cm.CancelledSince(at); err != nil || got != c.want {
			t.Errorf("CancelledSince(%s) = %v %v, want %v", c.at, got, err, c.want)
		}
	}
	home = qwenHome(t, nil, "session-tool-cancelled")
	r, _ = For("qwen", Where{Home: home, Worktree: qwenWorktree})
	at, _ := time.Parse(time.RFC3339Nano, "2026-12-05T22:06:57Z")
	if got, _ := r.(CancelMarker).CancelledSince(at); !got {
		t.Error("a cancelled tool is no cancel")
	}
	// The answer stopped as it streamed: its api_response at 14:18:29.026.
	home = qwenHome(t, map[string]int{"session-stream-cancelled": 11}, "session-stream-cancelled")
	r, _ = For("qwen", Where{Home: home, Worktree: qwenWorktree})
	for _, c := range []struct {
		at   string
		want bool
	}{{"2026-12-06T14:18:28.9Z", true}, {"2026-12-06T14:18:29.1Z", false}} {
		at, _ := time.Parse(time.RFC3339Nano, c.at)
		if got, err := r.(CancelMarker).CancelledSince(at); err != nil || got != c.want {
			t.Errorf("stream cut: CancelledSince(%s) = %v %v, want %v", c.at, got, err, c.want)
		}
	}
}
