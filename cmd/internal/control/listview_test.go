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
		{ID: "t5", Harness: "pi", Kind: "ship", Backend: "tmux", Endpoint: "fmses:fm-t5", State: "alive", Activity: "busy", Attention: "stalled", StalledFor: 612, Journal: "none"},
	}
	for _, c := range []struct {
		tty  bool
		want string
	}{
		{true, `ID         HARNESS  KIND   BACKEND  ENDPOINT       STATE        ACTIVITY             JOURNAL
bad        -        -      -        -              error        -                    none
t1         claude   ship   tmux     fmses:fm-t1    alive        idle                 none
long-task  codex    scout  herdr    default:w1:p2  dead         dead                 failed:stopping
t4         claude   ship   tmux     fmses:fm-t4    server-gone  dead                 none
t5         pi       ship   tmux     fmses:fm-t5    alive        busy (stalled 612s)  none
bad: error: task bad's record has no worktree= line

server-gone: t4; bring each back with: fm-spawn <id> --relaunch
or end one once its work has landed: fm-teardown <id>
`},
		{false, `bad: error: task bad's record has no worktree= line
t1: harness=claude kind=ship backend=tmux endpoint=fmses:fm-t1 state=alive activity=idle journal=none
long-task: harness=codex kind=scout backend=herdr endpoint=default:w1:p2 state=dead activity=dead journal=failed:stopping
t4: harness=claude kind=ship backend=tmux endpoint=fmses:fm-t4 state=missing server=gone activity=dead journal=none
t5: harness=pi kind=ship backend=tmux endpoint=fmses:fm-t5 state=alive activity=busy attention=stalled stalled_for=612s journal=none
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

// A watched list redraws when a stall begins or ends, not for each second
// of one.
func TestWatchIgnoresHowLongAStallLasted(t *testing.T) {
	rows := []listRow{{ID: "t1", Activity: "busy", Attention: "stalled", StalledFor: 612, Journal: "none"}}
	later := []listRow{{ID: "t1", Activity: "busy", Attention: "stalled", StalledFor: 614, Journal: "none"}}
	c0 := &Controller{print: cli.Printer{Out: &bytes.Buffer{}}}
	a, _ := c0.render("/h/state", withoutStallTimes(rows))
	b, _ := c0.render("/h/state", withoutStallTimes(later))
	if !bytes.Equal(a, b) {
		t.Errorf("a longer stall changed the watched view:\n%s\n%s", a, b)
	}
	if rows[0].StalledFor != 612 {
		t.Error("withoutStallTimes changed the rows it was given")
	}
	over, _ := c0.render("/h/state", withoutStallTimes([]listRow{{ID: "t1", Activity: "busy", Journal: "none"}}))
	if bytes.Equal(a, over) {
		t.Error("a stall's end did not change the watched view")
	}
}
