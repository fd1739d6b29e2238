package control

import (
	"context"
	"strings"

	"github.com/rogpeppe/go-internal/diff"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/cmd/internal/termtext"
)

// Follow prints the pane's last lines, as Read does, then its new lines as
// they appear, until the task's agent is gone (dead, or its endpoint
// missing), the context ends (SIGINT, SIGTERM) or stdout is closed. It
// polls as a long wait does, quickly again after new output. Nothing is
// locked, written or typed. With --json each batch of new lines is one read
// object.
func (c *Controller) Follow(ctx context.Context, id string, lines int) error {
	t, err := c.tasks().Open(id)
	if err != nil {
		return err
	}
	pause := c.idlePause(t.Store.AgentStatePath(id), t.Store.AgentEventsDir(id))
	var prev []string
	for first := true; ; first = false {
		obs, rows, err := stateAndLines(ctx, t, max(lines, followRows))
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fault.Failed("cannot read task %s's endpoint %s: %v", id, t.Endpoint.Target, err)
		}
		cur := plainRows(rows)
		added := newLines(prev, cur)
		if first {
			// --lines is what is printed first; what is new is found
			// in the whole window.
			added = added[max(0, len(added)-lines):]
		}
		if len(added) > 0 {
			if err := c.printFollowed(t, added); err != nil {
				// The reader went away (a closed pipe): following is over.
				return nil
			}
			pause.Reset()
		}
		prev = cur
		if obs.State == backends.StateDead || obs.State == backends.StateMissing {
			c.print.Notice("task %s's agent is no longer running at %s (state: %s); stopped following", id, t.Endpoint.Target, obs.State)
			return nil
		}
		if pause.Sleep(ctx, c.tun.Control.Watch) != nil || cli.ReaderGone(c.print.Out) {
			return nil
		}
	}
}

// stateAndLines reads the agent's state and then the pane's last n lines,
// in one multiplexer call where the backend can (an idle follower then
// starts one tmux client per look). The state is read first, so the text
// of the last round holds everything the agent wrote before it was gone.
func stateAndLines(ctx context.Context, t *task.Target, n int) (backends.Observation, []string, error) {
	if sh, ok := t.Backend.(backends.StateHistoryReader); ok {
		obs, rows, err := sh.AgentStateAndHistory(ctx, t.Endpoint, n)
		if err == nil {
			return obs, rows, nil
		}
		rows, err = paneLines(ctx, t, n)
		return obs, rows, err
	}
	obs := t.Backend.AgentState(ctx, t.Endpoint)
	rows, err := paneLines(ctx, t, n)
	return obs, rows, err
}

// followRows is how many of the pane's last lines each round of --follow
// compares, whatever --lines printed first: in a window as small as
// --lines 4, more new lines than that between two rounds replace the whole
// window (no line grew from another, so none read as new), and an agent
// whose composer and status bar sit below its output keeps the window
// unchanged while its output scrolls past above it.
const followRows = 500

func (c *Controller) printFollowed(t *task.Target, added []string) error {
	if c.print.JSON {
		c.print.Outcome(readOutcome(t, added))
		return c.print.Output.Err()
	}
	_, err := c.print.Out.Write([]byte(strings.Join(added, "\n") + "\n"))
	return err
}

// plainRows strips the pane's rows to plain text, as Read prints them, and
// drops the blank rows below the last written one (an empty screen's
// bottom), which are no output.
func plainRows(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.TrimRight(termtext.Strip(r), " ")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// newLines is what cur shows that prev did not: the lines a line diff
// finds inserted. A run of lines that replaces others in place is an
// agent redrawing its screen (a spinner, a status line, a composer):
// of such a run only the lines that grew from the line they replace
// (text still streaming in) are new. Lines that scrolled off the top are
// simply gone. An agent that redraws its whole screen reads as new text.
func newLines(prev, cur []string) []string {
	if len(prev) == 0 {
		return cur
	}
	d := diff.Diff("prev", joinLines(prev), "cur", joinLines(cur))
	var added, removed, run []string
	flush := func() {
		if len(removed) == 0 {
			added = append(added, run...)
		}
		for i, l := range run {
			if i < len(removed) && l != removed[i] && strings.HasPrefix(l, removed[i]) && removed[i] != "" {
				added = append(added, l)
			}
		}
		run, removed = nil, nil
	}
	body := strings.Split(string(d), "\n")
	for _, l := range body[min(3, len(body)):] { // past "diff", "---" and "+++"
		switch {
		case strings.HasPrefix(l, "+"):
			run = append(run, l[1:])
		case strings.HasPrefix(l, "-"):
			if len(run) > 0 {
				flush()
			}
			removed = append(removed, l[1:])
		default:
			flush()
		}
	}
	flush()
	return added
}

func joinLines(rows []string) []byte {
	return []byte(strings.Join(rows, "\n") + "\n")
}
