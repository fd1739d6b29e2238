package control

import (
	"bytes"
	"strings"
	"testing"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
)

func statusOutcome(state string) cli.Outcome {
	o := cli.Outcome{Word: "status", ID: "t1"}
	o.Add("harness", "claude").Put(fault.OrNull("recorded_harness", "claude-2", "none")).Add("kind", "ship").
		Add("backend", "tmux").Add("endpoint", "fmses:fm-t1").Add("worktree", "/tmp/wt\x1b[2J").
		Add("model", "default").Add("effort", "high").Add("permissions", "auto").
		Add("state", state).Add("activity", "idle").Add("evidence", "telemetry").
		Put(fault.Int("events_refused", 0)).Add("journal", "none")
	return o
}

// status on a terminal: a few aligned lines, each fact once, no control
// byte a record held, and the backend's why only when the state is not
// plainly alive.
func TestStatusViewIsAFewAlignedLines(t *testing.T) {
	var out bytes.Buffer
	p := cli.Printer{Out: &out, Width: 80}
	if err := printStatusView(p, statusOutcome("alive"), "pane_current_command claude"); err != nil {
		t.Fatal(err)
	}
	want := `task      t1, ship
harness   claude (recorded claude-2)
profile   model default, effort high, permissions auto
endpoint  tmux fmses:fm-t1
worktree  /tmp/wt
state     alive
activity  idle (evidence: telemetry)
journal   none
`
	if out.String() != want {
		t.Fatalf("view:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := printStatusView(p, statusOutcome("drifted"), "recorded pane %1 is now %1 in fmses:fm-t6, not fmses:fm-t1"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\nwhy       recorded pane %1 is now %1 in fmses:fm-t6, not fmses:fm-t1\n") {
		t.Fatalf("a drifted view does not say why:\n%s", out.String())
	}
}
