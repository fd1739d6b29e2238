package records

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The testdata files are real gemini-cli 0.61.0 records, driven by hand
// against the stub model with model.name pinned (see
// tests/captures/notes-opencode-pi-gemini.md). One session typed, in order:
// "hello one" (400), a pasted three-line message (400), /help (run by
// gemini), /nosuchcmd (sent to the model, 400), "please fmhang now" (held),
// "queued while busy" typed while held (shown as "Queued"), Escape (the held
// turn was cancelled and gemini at once sent the queued line, 400), then
// "fmhang two" and Escape ("Request cancelled."). A second launch sent
// "fmhang four". Chat copies were taken at each step, with the long
// <session_context> text of their $set lines trimmed:
//   - after400: after the first 400;
//   - busy: while "please fmhang now" was held, before and after the queued
//     line (byte-identical: a queued line is recorded only when sent);
//   - interrupted-queued: after the Escape that sent the queued line;
//   - interrupted: after the last Escape.
//
// logs-quit.json comes from another session that ended with /quit;
// logs-flushed.json is logs.json with one more submit of the first session
// after its last cancel, as gemini logs the queue it flushes at a cancel
// (tier, the outage world: the chat recorded it seconds later).
const geminiWorktree = "/tmp/opg/g3/wt"

// geminiHome lays out a HOME the way gemini does: tmp/<short>/.project_root,
// logs.json and chats/.
func geminiHome(t *testing.T, wt, logs string, chats ...string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".gemini", "tmp", "wt")
	if err := os.MkdirAll(filepath.Join(dir, "chats"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".project_root", []byte(wt))
	if logs != "" {
		write("logs.json", geminiData(t, logs))
	}
	for _, c := range chats {
		write(filepath.Join("chats", "session-"+c+".jsonl"), geminiData(t, c+".jsonl"))
	}
	return home
}

func geminiData(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gemini", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestGeminiUserMessagesSkipItsOwnCommands(t *testing.T) {
	msgs, _ := readRecord(t, "gemini", Where{Home: geminiHome(t, geminiWorktree, "logs.json"), Worktree: geminiWorktree})
	want := []string{"hello one", "line one\nline two\n  indented three", "/nosuchcmd",
		"please fmhang now", "queued while busy", "fmhang two", "fmhang four"}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("UserMessages = %q, want %q", msgs, want)
	}
	msgs, _ = readRecord(t, "gemini", Where{Home: geminiHome(t, "/tmp/opg/g1/wt", "logs-quit.json"), Worktree: "/tmp/opg/g1/wt"})
	if want := []string{"hello one", "please fmhang now"}; !reflect.DeepEqual(msgs, want) {
		t.Errorf("with /quit: UserMessages = %q, want %q", msgs, want)
	}
}

func TestGeminiTurnRunning(t *testing.T) {
	for _, c := range []struct {
		chat    string
		running bool
	}{
		{"after400", false},
		{"busy", true},
		{"interrupted-queued", false},
		{"interrupted", false},
		// Escape while a shell command ran (tier capture, 0.61.0): the
		// cancelled calls and their responses are written after the info
		// line, and gemini sends nothing on.
		{"tool-cancelled", false},
		{"tool-cancelled-calls", false},
	} {
		t.Run(c.chat, func(t *testing.T) {
			_, running := readRecord(t, "gemini", Where{Home: geminiHome(t, geminiWorktree, "logs.json", c.chat), Worktree: geminiWorktree})
			if running != c.running {
				t.Errorf("TurnRunning = %v, want %v", running, c.running)
			}
		})
	}
}

// Escape while gemini 0.61 ran its BeforeAgent hooks (tier, a user hook
// that sleeps): the info line is recorded at the Escape, the prompt only
// when the hooks return, and no request goes out. The same text submitted
// again after the cancel is a new turn.
func TestGeminiPromptCancelledDuringItsHooks(t *testing.T) {
	for _, c := range []struct {
		logs    string
		running bool
	}{
		{"logs-hook.json", false},
		{"logs-hook-resent.json", true},
		{"logs.json", true}, // no submit of that text on record: the prompt line stands
	} {
		t.Run(c.logs, func(t *testing.T) {
			_, running := readRecord(t, "gemini", Where{Home: geminiHome(t, geminiWorktree, c.logs, "hook-cancelled"), Worktree: geminiWorktree})
			if running != c.running {
				t.Errorf("TurnRunning = %v, want %v", running, c.running)
			}
		})
	}
}

// A prompt submitted after the cancel the chat ends with (the queue gemini
// flushes at the cancel) is in logs.json at once and in the chat only when
// its BeforeAgent hooks return: the turn runs from the submit. A submit of
// another session (a later launch) is not this chat's turn.
func TestGeminiPromptSubmittedAfterACancel(t *testing.T) {
	for _, c := range []struct {
		logs    string
		running bool
	}{
		{"logs-flushed.json", true},
		{"logs.json", false},
	} {
		t.Run(c.logs, func(t *testing.T) {
			_, running := readRecord(t, "gemini", Where{Home: geminiHome(t, geminiWorktree, c.logs, "interrupted"), Worktree: geminiWorktree})
			if running != c.running {
				t.Errorf("TurnRunning = %v, want %v", running, c.running)
			}
		})
	}
}

// The cancel is marked where the Escape was read, before the prompt it
// cancelled was recorded.
func TestGeminiCancelledSince(t *testing.T) {
	r, err := For("gemini", Where{Home: geminiHome(t, geminiWorktree, "logs-hook.json", "hook-cancelled"), Worktree: geminiWorktree})
	if err != nil {
		t.Fatal(err)
	}
	m := r.(CancelMarker)
	for _, c := range []struct {
		at   string
		want bool
	}{
		{"2026-12-04T15:06:56.000Z", true},
		{"2026-12-04T15:06:56.4967Z", true}, // the mark's stamp is whole milliseconds
		{"2026-12-04T15:06:56.497Z", false},
	} {
		at, _ := time.Parse(time.RFC3339Nano, c.at)
		if got, err := m.CancelledSince(at); got != c.want || err != nil {
			t.Errorf("CancelledSince(%s) = %v, %v; want %v", c.at, got, err, c.want)
		}
	}
}

// gemini deletes a chat whose turns all failed when it exits; the newest
// remaining recording (by its header's start) decides.
func TestGeminiChatGoneOrOlder(t *testing.T) {
	msgs, running := readRecord(t, "gemini", Where{Home: geminiHome(t, geminiWorktree, "logs.json"), Worktree: geminiWorktree})
	if running || len(msgs) == 0 {
		t.Errorf("no chat: running=%v msgs=%q", running, msgs)
	}
	// busy and interrupted are the same session; give busy a later start.
	home := geminiHome(t, geminiWorktree, "logs.json", "interrupted")
	busy := geminiData(t, "busy.jsonl")
	header := `{"sessionId":"x","projectHash":"8427b03aaaffe4bcba91a66cd959ae8319ed6ea22f8a5607f5016d706cd14ecf","startTime":"2026-12-02T21:00:00.000Z","kind":"main"}`
	busy = append([]byte(header), busy[bytes.IndexByte(busy, '\n'):]...)
	if err := os.WriteFile(filepath.Join(home, ".gemini", "tmp", "wt", "chats", "session-later.jsonl"), busy, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, running := readRecord(t, "gemini", Where{Home: home, Worktree: geminiWorktree}); !running {
		t.Error("the later, busy session did not decide")
	}
}

func TestGeminiOtherWorktree(t *testing.T) {
	msgs, running := readRecord(t, "gemini", Where{Home: geminiHome(t, geminiWorktree, "logs.json", "busy"), Worktree: "/elsewhere"})
	if len(msgs) != 0 || running {
		t.Errorf("another worktree's records were read: %q running=%v", msgs, running)
	}
}

// A tool's real response is the turn going on; only responses gemini wrote
// for calls the user cancelled end it.
func TestGeminiCancelledResponses(t *testing.T) {
	for _, c := range []struct {
		content string
		want    bool
	}{
		{`[{"functionResponse":{"response":{"error":"[Operation Cancelled] Reason: Operation cancelled by user"}}}]`, true},
		{`[{"functionResponse":{"response":{"output":"done"}}}]`, false},
		{`[{"functionResponse":{"response":{"error":"[Operation Cancelled] x"}}},{"functionResponse":{"response":{"output":"done"}}}]`, false},
		{`[{"text":"a prompt"}]`, false},
		{`"a prompt"`, false},
	} {
		if got := geminiCancelledResponses([]byte(c.content)); got != c.want {
			t.Errorf("geminiCancelledResponses(%s) = %v, want %v", c.content, got, c.want)
		}
	}
	if !geminiCallsPending([]byte(`[{"status":"success"}]`)) || geminiCallsPending([]byte(`[{"status":"cancelled"}]`)) || geminiCallsPending(nil) {
		t.Error("geminiCallsPending: a finished call is pending, a cancelled one is not, none is not")
	}
}
