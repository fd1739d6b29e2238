package control

import (
	"context"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/retire"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/state"
)

// recoverTeardown settles a teardown journal a dead fm-teardown left: it is
// undone while the agent is not yet proven stopped, and finished after.
func (c *Controller) recoverTeardown(ctx context.Context, home config.Home, store state.Store, id string) error {
	lock, err := lockTorn(store, id, "teardown")
	if err != nil {
		return err
	}
	defer lock.Release()
	path := store.TeardownPath(id)
	j, err := state.ReadJournal(path)
	if err != nil {
		return fault.Failed("task %s's teardown journal cannot be read: %v", id, err).Hint("read %s, and settle the task by hand", path)
	}
	x := &retire.Tx{Plan: retire.PlanOf(j), Store: store, DataDir: home.Data, Git: c.git}
	if exists(store.MetaPath(id)) {
		// The record moves last of all: while it is here the endpoint can
		// be resolved, and must be, to close it or read its agent.
		var t *task.Target
		if t, err = c.tasks().Load(home, id); err != nil {
			return err
		}
		x.Target = t
	}
	s, err := x.Resume(ctx, j)
	if err != nil {
		return fault.Failed("task %s's teardown, torn in phase %s, could not be settled: %v", id, j.Phase, err).
			Hint("fix what it names, then settle it again: fm-control recover %s", id)
	}
	out := cli.Outcome{Word: "recovered", ID: id}
	out.Add("journal", "teardown").Add("phase", s.Phase).Put(result(s.Result))
	if s.Result == "completed" {
		out.Add("agent", x.Agent).Add("endpoint", orNone(s.Done.Endpoint)).Add("worktree", orNone(s.Done.Worktree)).
			Add("branch", orNone(s.Done.Branch)).Add("archive", x.Plan.Archive)
	}
	c.print.Outcome(out)
	if s.Why != "" {
		c.print.Notice("task %s's teardown was undone: %s; the task is kept as it was", id, s.Why)
	}
	return nil
}
