package control

import (
	"context"
	"errors"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
)

func (c *Controller) runExit(ctx context.Context, t *task.Target) error {
	res, err := c.verbs.Stop(ctx, t, false, false)
	// Only a stopped agent's wiring goes (with background_turn the TUI is
	// gone and only its daemon's turn is unproven); a merged settings file
	// loses only fmctl's entries, and the agent-state file stays as the
	// record of how the agent ended.
	var re *fault.Error
	if err == nil || (errors.As(err, &re) && re.Get("background_turn") != "") {
		if rerr := t.RetireWiring(); rerr != nil {
			c.print.Notice("task %s's agent stopped, but its telemetry wiring was not retired: %v", t.ID, rerr)
		}
	}
	if err != nil {
		return err
	}
	out := cli.Outcome{Word: string(res.Result), ID: t.ID}
	out.Add("harness", t.Harness.Name).Add("backend", t.BackendName).
		Add("endpoint", t.Endpoint.Target).Add("worktree", t.Endpoint.Worktree)
	if left := res.LeftValue(); left != "" {
		out.Add("left", left)
	}
	if len(res.Untaken) > 0 {
		// Messages fm-send left queued that the agent never took: they
		// went with it, and a replacement must be sent them again.
		out.Put(fault.IDs("untaken", res.Untaken))
	}
	c.print.Outcome(out)
	if note := res.LeftNotice(t); note != "" {
		c.print.Notice("%s", note)
	}
	return nil
}
