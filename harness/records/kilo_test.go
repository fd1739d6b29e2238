package records

import (
	"testing"
	"time"
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
	checkRecordDumps(t, "kilo", kiloWorktree, kiloTyped, []recordDump{
		{"after-reply", 1, false},
		{"busy", 2, true},
		{"busy-queued", 3, true},
		{"interrupted-queued", 3, false},
		{"interrupted", 4, false},
		{"relaunch", 7, false},
	})
}

// Only the newest session's last turn counts, and kilo's database is not
// opencode's: the same HOME read as opencode holds nothing.
func TestKiloNewestSessionAndOwnDatabase(t *testing.T) {
	home := checkNewestSessionTurn(t, "kilo", kiloWorktree, "ses_db7c2bbe1ffeWwfLGqtb0H3wgL", "ses_db7c0deebffewdM3RdndG0r7N6")
	if msgs, running := readRecord(t, "opencode", Where{Home: home, Worktree: kiloWorktree}); len(msgs) != 0 || running {
		t.Errorf("opencode's reader read kilo's database: %q running=%v", msgs, running)
	}
}

// A newest session begun before the live agent was launched (Where.Since)
// is an earlier agent's: its unfinished turn (the agent was killed
// mid-turn) runs nowhere, while the live agent has not begun its own.
func TestKiloTurnOfAnEarlierAgent(t *testing.T) {
	const newSession = "ses_db7c0deebffewdM3RdndG0r7N6"
	created := time.UnixMilli(1796508426517) // that session's time_created
	home := sqliteHome(t, "kilo", "relaunch", reopenTurn(newSession))
	for _, c := range []struct {
		name    string
		since   time.Time
		running bool
	}{
		{"launched before the session", created.Add(-time.Second), true},
		{"launched after the session", created.Add(time.Second), false},
		{"launch unknown", time.Time{}, true},
	} {
		_, running := readRecord(t, "kilo", Where{Home: home, Worktree: kiloWorktree, Since: c.since})
		if running != c.running {
			t.Errorf("%s: TurnRunning = %v, want %v", c.name, running, c.running)
		}
	}
}
