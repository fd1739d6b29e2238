package records

import (
	"reflect"
	"strings"
	"testing"
)

// The testdata files are `.dump session message part` of a real kilo 7.7.7
// database (@kilocode/cli), driven by hand on a private tmux server against
// the stub model (tests/captures/notes-kilo.md). One run, launched bare,
// then typed: "hello one" (answered), "please fmhang now" (held), "queued
// while busy" (QUEUED), two Escapes (the held turn ends with
// MessageAbortedError; the queued message stays recorded, never sent),
// "fmhang two", two Escapes. Copies were taken after the reply, while busy,
// with the queued message, and after each interrupt. relaunch is the same
// database after "line one/exit" (answered) and a second launch in the
// worktree with --prompt "please fmtool ..." in ask mode (two tool calls
// allowed) and "fmhang three", interrupted, then /exit.
const kiloWorktree = "/tmp/kilo-probe/wt"

var kiloTyped = []string{"hello one", "please fmhang now", "queued while busy", "fmhang two",
	"line one/exit", "please fmtool /tmp/kilo-probe/wt", "fmhang three"}

func TestKiloRecords(t *testing.T) {
	for _, c := range []struct {
		dump    string
		n       int // how many of kiloTyped are recorded
		running bool
	}{
		{"after-reply", 1, false},
		{"busy", 2, true},
		{"busy-queued", 3, true},
		{"interrupted-queued", 3, false},
		{"interrupted", 4, false},
		{"relaunch", 7, false},
	} {
		t.Run(c.dump, func(t *testing.T) {
			msgs, running := readRecord(t, "kilo", Where{Home: sqliteHome(t, "kilo", c.dump), Worktree: kiloWorktree})
			if want := kiloTyped[:c.n]; !reflect.DeepEqual(msgs, want) {
				t.Errorf("UserMessages = %q, want %q", msgs, want)
			}
			if running != c.running {
				t.Errorf("TurnRunning = %v, want %v", running, c.running)
			}
		})
	}
}

// Only the newest session's last turn counts, and kilo's database is not
// opencode's: the same HOME read as opencode holds nothing.
func TestKiloNewestSessionAndOwnDatabase(t *testing.T) {
	const reopen = `UPDATE message SET data = json_remove(data, '$.time.completed')
		WHERE json_extract(data, '$.role') = 'assistant' AND session_id = '%s'`
	const oldSession, newSession = "ses_db7c2bbe1ffeWwfLGqtb0H3wgL", "ses_db7c0deebffewdM3RdndG0r7N6"
	home := sqliteHome(t, "kilo", "relaunch", strings.ReplaceAll(reopen, "%s", oldSession))
	if _, running := readRecord(t, "kilo", Where{Home: home, Worktree: kiloWorktree}); running {
		t.Error("an unfinished turn in an older session read as running")
	}
	home = sqliteHome(t, "kilo", "relaunch", strings.ReplaceAll(reopen, "%s", newSession))
	if _, running := readRecord(t, "kilo", Where{Home: home, Worktree: kiloWorktree}); !running {
		t.Error("an unfinished turn in the newest session did not read as running")
	}
	if msgs, running := readRecord(t, "opencode", Where{Home: home, Worktree: kiloWorktree}); len(msgs) != 0 || running {
		t.Errorf("opencode's reader read kilo's database: %q running=%v", msgs, running)
	}
}
