package control

import (
	"context"
	"strings"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/cmd/internal/termtext"
	"fmctl/state"
)

// Read prints the last lines of task id's pane as plain text: every
// terminal control sequence an agent wrote is stripped, so the text cannot
// act on the caller's terminal. No lock is taken and nothing is typed.
func (c *Controller) Read(ctx context.Context, id string, lines int) error {
	t, err := c.tasks().Open(id)
	if err != nil {
		return err
	}
	rows, err := paneLines(ctx, t, lines)
	if err != nil {
		return fault.Failed("cannot read task %s's endpoint %s: %v", id, t.Endpoint.Target, err)
	}
	for i, r := range rows {
		rows[i] = strings.TrimRight(termtext.Strip(r), " ")
	}
	text := strings.Join(rows, "\n")
	if c.print.JSON {
		c.print.Outcome(readOutcome(t, rows))
		return nil
	}
	if len(rows) > 0 {
		text += "\n"
	}
	_, err = c.print.Out.Write([]byte(text))
	return err
}

// readOutcome is read's JSON object for the lines rows.
func readOutcome(t *task.Target, rows []string) cli.Outcome {
	out := cli.Outcome{Word: "read", ID: t.ID}
	out.Add("backend", t.BackendName).Add("endpoint", t.Endpoint.Target).
		Put(fault.Int("lines", len(rows))).Add("text", strings.Join(rows, "\n"))
	return out
}

// ReadAudit prints task id's audit trail (state/<id>.audit): one line per
// attempt to change the task, and per refused attempt of any kind, oldest
// first. A task never acted on has an empty trail. Under --json it is read's
// object, its text the trail.
func (c *Controller) ReadAudit(id string) error {
	home, err := c.tasks().Begin(id)
	if err != nil {
		return err
	}
	store := state.Store{Dir: home.State}
	t, err := store.LoadTask("fm-control", id)
	if err != nil {
		return err
	}
	data, err := store.ReadAudit(id)
	if err != nil {
		return fault.Failed("cannot read task %s's audit trail: %v", id, err)
	}
	// Every agent of the user can write the file, so it is printed as a
	// pane is: nothing in it may act on the reader's terminal.
	rows := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, r := range rows {
		rows[i] = termtext.Strip(r)
	}
	text := strings.Join(rows, "\n")
	if c.print.JSON {
		n := 0
		if text != "" {
			n = strings.Count(text, "\n") + 1
		}
		out := cli.Outcome{Word: "read", ID: id}
		c.print.Outcome(*out.Add("backend", t.Record.Backend()).Add("endpoint", t.Record.Window()).
			Put(fault.Int("lines", n)).Add("text", text))
		return nil
	}
	if text != "" {
		text += "\n"
	}
	_, err = c.print.Out.Write([]byte(text))
	return err
}

// paneLines reads the pane's last n lines: with scrollback where the
// adapter can, else from the visible screen.
func paneLines(ctx context.Context, t *task.Target, n int) ([]string, error) {
	if h, ok := t.Backend.(backends.HistoryReader); ok {
		return h.History(ctx, t.Endpoint, n)
	}
	s, err := t.Backend.Capture(ctx, t.Endpoint)
	if err != nil {
		return nil, err
	}
	return backends.LastLines(strings.Join(s.Lines, "\n"), n), nil
}
