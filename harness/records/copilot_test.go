package records

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The testdata files are real @github/copilot 1.0.102 events.jsonl files,
// driven by hand in tmux against the stub model (tests/captures/notes-copilot.md):
//   - session-turns: "hello one" (answered), "please fmlong20 now" (double
//     Escape while it streamed: user_abort), "please fmhang two" and
//     "... three" (Ctrl+C: user_initiated), a text typed while busy and sent
//     after the cancel, texts queued during fmlong15 and sent after it, /exit;
//   - session-tool: "hello there", "please fmhang now" (Ctrl+C), "please
//     fmtool ..." in ask mode (its first shell call approved, the second
//     denied with Escape, which aborts the turn), /exit; fmctl's kind of
//     hooks ran, so hook.start/hook.end lines are interleaved.
//
// A prefix of a file is the file as it stood at that line: copilot only
// appends.
const copilotWorktree = "/tmp/cop/wt"

// copilotHome lays out a HOME holding the named sessions, each cut to its
// first lines (0 = whole), written in order.
func copilotHome(t *testing.T, files map[string]int, order ...string) string {
	t.Helper()
	home := t.TempDir()
	layRecords(t, "copilot", files, order, func(name string) string {
		return filepath.Join(home, ".copilot", "session-state", name, "events.jsonl")
	})
	// A session whose events were never written (copilot creates the folder
	// at launch and the file at the first prompt) is no one's.
	if err := os.MkdirAll(filepath.Join(home, ".copilot", "session-state", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestCopilotUserMessagesEachOnce(t *testing.T) {
	home := copilotHome(t, nil, "session-turns", "session-tool")
	msgs, _ := readRecord(t, "copilot", Where{Home: home, Worktree: copilotWorktree})
	want := []string{"hello one", "please fmlong20 now", "please fmhang two", "please fmhang three",
		"queued while busyheld text", "please fmlong15 now", "queued one", "please fmlong15 now", "typed while busy",
		"hello there", "please fmhang now", "please fmtool /tmp/cop/wt now"}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("UserMessages = %q, want %q", msgs, want)
	}
	// Another worktree's sessions are not this one's.
	if msgs, _ := readRecord(t, "copilot", Where{Home: home, Worktree: "/tmp/cop/wt2"}); len(msgs) != 0 {
		t.Errorf("another worktree read %q", msgs)
	}
}

func TestCopilotTurnRunning(t *testing.T) {
	for _, c := range []struct {
		name    string
		lines   int
		running bool
	}{
		{"session-turns", 3, false}, // launched, nothing asked
		{"session-turns", 4, true},  // the prompt written
		{"session-turns", 8, true},  // answered, its turn_end not yet
		{"session-turns", 9, false}, // turn_end after a plain answer
		{"session-turns", 13, true}, // fmlong20 streaming
		{"session-turns", 15, false},
		{"session-turns", 17, true}, // fmhang two held
		{"session-turns", 19, false},
		{"session-turns", 0, false}, // shut down
		{"session-tool", 27, true},  // the shell tool running
		{"session-tool", 32, true},  // at the permission dialog
		{"session-tool", 39, true},  // turn_end after an answer calling tools: the next request follows
		{"session-tool", 40, true},
		{"session-tool", 52, true}, // the denied call's turn_end, its abort not yet written
		{"session-tool", 53, false},
	} {
		home := copilotHome(t, map[string]int{c.name: c.lines}, c.name)
		if _, running := readRecord(t, "copilot", Where{Home: home, Worktree: copilotWorktree}); running != c.running {
			t.Errorf("%s to line %d: TurnRunning = %v, want %v", c.name, c.lines, running, c.running)
		}
	}
	// The newest session is the live one.
	home := copilotHome(t, map[string]int{"session-turns": 17}, "session-turns", "session-tool")
	if _, running := readRecord(t, "copilot", Where{Home: home, Worktree: copilotWorktree}); running {
		t.Error("an older session's held turn reads as the live one's")
	}
}

func TestCopilotCancelledSince(t *testing.T) {
	home := copilotHome(t, map[string]int{"session-turns": 19}, "session-turns")
	r, _ := For("copilot", Where{Home: home, Worktree: copilotWorktree})
	cm, ok := r.(CancelMarker)
	if !ok {
		t.Fatal("the copilot reader marks no cancels")
	}
	// The abort of "please fmhang two" is stamped 01:19:40.490.
	for _, c := range []struct {
		at   string
		want bool
	}{{"2026-12-06T01:19:40.490Z", true}, {"2026-12-06T01:19:38Z", true}, {"2026-12-06T01:19:41Z", false}} {
		at, _ := time.Parse(time.RFC3339Nano, c.at)
		if got, err := cm.CancelledSince(at); err != nil || got != c.want {
			t.Errorf("CancelledSince(%s) = %v %v, want %v", c.at, got, err, c.want)
		}
	}
}

// Entries of the two real sessions: each prompt, the stub's replies, the
// shell call with its result, and how each turn ended (an answer completed,
// a Ctrl+C or double Escape cancelled).
func TestCopilotEntriesTellTheConversation(t *testing.T) {
	home := copilotHome(t, nil, "session-turns", "session-tool")
	entries, err := copilotReader{Where{Home: home, Worktree: copilotWorktree}}.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		switch e.Kind {
		case EntryUser:
			got = append(got, "user "+e.Text)
		case EntryTurnEnd:
			got = append(got, "end "+string(e.End))
		case EntryToolCall, EntryToolResult:
			got = append(got, string(e.Kind)+" "+e.Tool)
		}
	}
	want := []string{
		"user hello one", "end completed",
		"user please fmlong20 now", "end cancelled",
		"user please fmhang two", "end cancelled",
		"user please fmhang three", "end cancelled",
		"user queued while busyheld text", "end completed",
	}
	if len(got) < len(want) || !reflect.DeepEqual(got[:len(want)], want) {
		t.Fatalf("entries begin %q,\nwant %q", got, want)
	}
	var replies, calls, results int
	for _, e := range entries {
		switch e.Kind {
		case EntryReply:
			replies++
		case EntryToolCall:
			calls++
		case EntryToolResult:
			results++
			if e.Tool != "bash" {
				t.Errorf("a tool result names tool %q, want bash (its call's)", e.Tool)
			}
		}
	}
	if replies == 0 || calls == 0 || results == 0 {
		t.Errorf("replies %d, tool calls %d, results %d: want each of the real sessions' kinds", replies, calls, results)
	}
}

// session-outage: a real 1.0.102 session run by the tier's outage group
// against a provider refusing connections: the launch prompt answered,
// then two turns that failed for good, each turn_end then session.error
// and no agentStop hook, then three turns cancelled (abort).
func TestCopilotFailedTurnEndsAtItsSessionError(t *testing.T) {
	home := copilotHome(t, map[string]int{"session-outage": 23}, "session-outage")
	if _, running := readRecord(t, "copilot", Where{Home: home, Worktree: copilotWorktree}); running {
		t.Error("a turn ended by session.error read as running")
	}
	entries, err := copilotReader{Where{Home: home, Worktree: copilotWorktree}}.Entries()
	if err != nil {
		t.Fatal(err)
	}
	last := entries[len(entries)-1]
	if last.Kind != EntryTurnEnd || last.End != Failed || !strings.HasPrefix(last.Text, "Could not connect to local model provider") {
		t.Errorf("the turn's end = %+v, want failed with copilot's error", last)
	}
}
