package control

import (
	"bytes"
	"testing"

	"fmctl/cmd/internal/cli"
)

// On a terminal list is a table a person reads; piped it keeps its lines.
func TestListIsATableOnATerminalAndLinesWhenPiped(t *testing.T) {
	rows := []listRow{
		{ID: "bad", Journal: "none", Error: "task bad's record has no worktree= line"},
		{ID: "t1", Harness: "claude", Kind: "ship", Backend: "tmux", Endpoint: "fmses:fm-t1", State: "alive", Activity: "idle", Journal: "none"},
		{ID: "long-task", Harness: "codex", Kind: "scout", Backend: "herdr", Endpoint: "default:w1:p2", State: "dead", Activity: "dead", Journal: "failed:stopping"},
		{ID: "t4", Harness: "claude", Kind: "ship", Backend: "tmux", Endpoint: "fmses:fm-t4", State: "missing", Server: "gone", Activity: "dead", Journal: "none"},
	}
	for _, c := range []struct {
		tty  bool
		want string
	}{
		{true, `ID         HARNESS  KIND   BACKEND  ENDPOINT       STATE        ACTIVITY  JOURNAL
bad        -        -      -        -              error        -         none
t1         claude   ship   tmux     fmses:fm-t1    alive        idle      none
long-task  codex    scout  herdr    default:w1:p2  dead         dead      failed:stopping
t4         claude   ship   tmux     fmses:fm-t4    server-gone  dead      none
bad: error: task bad's record has no worktree= line

server-gone: t4; bring each back with: fm-spawn <id> --relaunch
or end one once its work has landed: fm-teardown <id>
`},
		{false, `bad: error: task bad's record has no worktree= line
t1: harness=claude kind=ship backend=tmux endpoint=fmses:fm-t1 state=alive activity=idle journal=none
long-task: harness=codex kind=scout backend=herdr endpoint=default:w1:p2 state=dead activity=dead journal=failed:stopping
t4: harness=claude kind=ship backend=tmux endpoint=fmses:fm-t4 state=missing server=gone activity=dead journal=none
`},
	} {
		var out bytes.Buffer
		c0 := &Controller{print: cli.Printer{Out: &out, OutTTY: c.tty}}
		if err := c0.printList("/h/state", rows); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("tty=%v:\n%s\nwant\n%s", c.tty, out.String(), c.want)
		}
	}
}
