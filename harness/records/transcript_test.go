package records

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The entries of the committed real records (see each reader's test for
// how each was made); gemini's replied.jsonl and logs-replied.json are a
// real-agent tier lab's record of gemini 0.61.0 (a reply, then turns
// cancelled by Escape).

const geminiRepliedWorktree = "/tmp/fmagents-gemini-2226454156/wt"

// transcriptCases are every committed record laid out as its CLI keeps it.
func transcriptCases(t *testing.T) map[string]struct {
	harness string
	w       Where
} {
	codexHome := func(snap string) string {
		home := t.TempDir()
		if err := os.CopyFS(filepath.Join(home, ".codex"), os.DirFS(filepath.Join("testdata", "codex", snap))); err != nil {
			t.Fatal(err)
		}
		return home
	}
	type c = struct {
		harness string
		w       Where
	}
	cases := map[string]c{
		"pi/interrupted":          {"pi", Where{Home: piHome(t, "--x--", "interrupted"), Worktree: piWorktree}},
		"pi/queued-delivered":     {"pi", Where{Home: piHome(t, "--x--", "queued-delivered"), Worktree: "/tmp/opg/pi3/wt"}},
		"claude/exited-busy":      {"claude", Where{Home: claudeHome(t, "exited-busy"), Worktree: claudeWorktree}},
		"codex/two-queued":        {"codex", Where{Home: codexHome("interrupted-two-queued"), Worktree: codexWorktree}},
		"codex/quit-busy":         {"codex", Where{Home: codexHome("quit-busy"), Worktree: codexWorktree}},
		"qwen/turns":              {"qwen", Where{Home: qwenHome(t, nil, "session-queued", "session-turns"), Worktree: qwenWorktree}},
		"qwen/tool-cancelled":     {"qwen", Where{Home: qwenHome(t, nil, "session-tool-cancelled"), Worktree: qwenWorktree}},
		"gemini/replied":          {"gemini", Where{Home: geminiHome(t, geminiRepliedWorktree, "logs-replied.json", "replied"), Worktree: geminiRepliedWorktree}},
		"gemini/tool-cancelled":   {"gemini", Where{Home: geminiHome(t, geminiWorktree, "logs.json", "tool-cancelled"), Worktree: geminiWorktree}},
		"gemini/interrupted":      {"gemini", Where{Home: geminiHome(t, geminiWorktree, "logs.json", "interrupted"), Worktree: geminiWorktree}},
		"cline/interrupted":       {"cline", Where{Home: clineHome(t, "interrupted"), Worktree: clineWorktree}},
		"cline/tool":              {"cline", Where{Home: clineHome(t, "tool"), Worktree: clineWorktree}},
		"opencode/relaunch":       {"opencode", Where{Home: "", Worktree: opencodeWorktree}},
		"opencode/interrupted-qd": {"opencode", Where{Home: "", Worktree: opencodeWorktree}},
	}
	return cases
}

func entriesOf(t *testing.T, harness string, w Where) []Entry {
	t.Helper()
	if w.Query == nil {
		w.Query = execSQLite
	}
	r, err := For(harness, w)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := r.(Transcript)
	if !ok {
		t.Fatalf("%s's reader shows no transcript", harness)
	}
	es, err := tr.Entries()
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// A transcript's user entries are the reader's user messages, one for one:
// fm-send's baseline counts copies in one, read --record finds them in the
// other.
func TestEntriesHoldExactlyTheUserMessages(t *testing.T) {
	for name, c := range transcriptCases(t) {
		t.Run(name, func(t *testing.T) {
			if c.harness == "opencode" {
				c.w.Home = opencodeHome(t, map[string]string{"opencode/relaunch": "relaunch", "opencode/interrupted-qd": "interrupted-queued"}[name])
			}
			es := entriesOf(t, c.harness, c.w)
			var users []string
			for _, e := range es {
				if e.Kind == EntryUser {
					users = append(users, e.Text)
				}
			}
			msgs, _ := readRecord(t, c.harness, c.w)
			if !slices.Equal(users, msgs) {
				t.Errorf("user entries %q, UserMessages %q", users, msgs)
			}
			if len(es) == 0 {
				t.Error("no entries")
			}
		})
	}
}

// shape is a transcript in short: each entry's kind, with a turn end's
// outcome, a tool's name or a user message's text.
func shape(es []Entry) string {
	var b []string
	for _, e := range es {
		s := string(e.Kind)
		switch e.Kind {
		case EntryTurnEnd:
			s += ":" + string(e.End)
		case EntryToolCall, EntryToolResult:
			s += ":" + e.Tool
		case EntryUser:
			s += ":" + strings.Fields(e.Text + " -")[0]
		}
		b = append(b, s)
	}
	return strings.Join(b, " ")
}

func TestTranscriptShapes(t *testing.T) {
	cases := transcriptCases(t)
	for _, c := range []struct{ name, want string }{
		// pi: a 400 ends a turn failed, Escape cancelled.
		{"pi/interrupted", "user:hello turn-end:failed user:line turn-end:failed user:/nosuchcmd turn-end:failed user:please turn-end:cancelled"},
		// claude: the 400's text goes with the failed end; Escape with a
		// message queued records the cancel, with an empty composer nothing.
		{"claude/exited-busy", "user:Read turn-end:failed user:hello turn-end:failed user:line turn-end:failed user:please turn-end:cancelled user:queued user:second user:third"},
		{"codex/two-queued", "user:Read turn-end:failed user:hello turn-end:failed user:line turn-end:failed user:please turn-end:cancelled user:queued turn-end:cancelled user:queued"},
		// qwen: replies, tool calls with their results, and every end.
		{"qwen/tool-cancelled", "user:please reply tool-call:run_shell_command tool-result:run_shell_command turn-end:cancelled"},
		// gemini: a reply's turn ends where the next prompt shows it.
		// cline: a prompt the next one follows with no reply was
		// cancelled (it is written when its turn ends); the queued text
		// was sent and answered; the last, held, ended at /exit.
		{"cline/interrupted", "user:Read reply turn-end:completed user:stream reply turn-end:completed user:wait turn-end:cancelled user:stream turn-end:cancelled user:hold turn-end:cancelled user:queued reply turn-end:completed user:hold turn-end:cancelled"},
		{"cline/tool", "user:do reply tool-call:run_commands tool-result:run_commands reply tool-call:editor tool-result:editor reply turn-end:completed"},
		{"gemini/replied", "user:Read reply turn-end:completed user:start turn-end:cancelled user:after reply turn-end:completed user:a turn-end:cancelled user:a turn-end:cancelled"},
	} {
		if got := shape(entriesOf(t, cases[c.name].harness, cases[c.name].w)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	turns := shape(entriesOf(t, "qwen", Where{Home: qwenHome(t, nil, "session-turns"), Worktree: qwenWorktree}))
	if want := "user:please reply tool-call:run_shell_command tool-result:run_shell_command reply tool-call:write_file tool-result:write_file reply turn-end:completed"; !strings.Contains(turns, want) {
		t.Errorf("qwen turns: %s\nlacks %s", turns, want)
	}
	// gemini records a cancelled tool call after the cancel itself.
	if got, want := shape(entriesOf(t, "gemini", cases["gemini/tool-cancelled"].w)), "reply turn-end:cancelled tool-call:run_shell_command tool-result:run_shell_command"; !strings.HasSuffix(got, want) {
		t.Errorf("gemini tool-cancelled: %s\nends not in %s", got, want)
	}
	oc := shape(entriesOf(t, "opencode", Where{Home: opencodeHome(t, "relaunch"), Worktree: opencodeWorktree, Query: execSQLite}))
	if want := "user:abc turn-end:failed user:please turn-end:cancelled user:queued user:fmhang turn-end:cancelled"; !strings.Contains(oc, want) {
		t.Errorf("opencode: %s\nlacks %s", oc, want)
	}
}

// The failed end carries the error the record gives.
func TestTurnEndCarriesTheError(t *testing.T) {
	es := entriesOf(t, "claude", Where{Home: claudeHome(t, "after400"), Worktree: claudeWorktree})
	if es[1].Kind != EntryTurnEnd || es[1].End != Failed || !strings.Contains(es[1].Text, "400") || es[1].Time.IsZero() {
		t.Errorf("claude's 400: %+v", es[1])
	}
}

func TestToolTextIsCutShort(t *testing.T) {
	long := strings.Repeat("é", maxToolText) // two bytes each
	e := toolEntry(EntryToolResult, time.Time{}, "bash", long)
	if e.Cut == 0 || !strings.HasSuffix(e.Text, "more bytes]") || len(e.Text) > maxToolText+40 {
		t.Fatalf("cut %d, text %d bytes: %q", e.Cut, len(e.Text), e.Text[len(e.Text)-30:])
	}
	if kept := strings.TrimSuffix(e.Text, e.Text[strings.Index(e.Text, "…"):]); len(kept)+e.Cut != len(long) || !strings.HasPrefix(long, kept) {
		t.Errorf("kept %d + cut %d != %d", len(kept), e.Cut, len(long))
	}
	if short := toolEntry(EntryToolCall, time.Time{}, "bash", "ls"); short.Cut != 0 || short.Text != "ls" {
		t.Errorf("short text changed: %+v", short)
	}
}
