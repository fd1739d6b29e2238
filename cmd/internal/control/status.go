package control

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// Status reads a task without acting on it and without taking the
// lifecycle lock: the record, the backend's agent state, the one activity
// word with the evidence that decided it, and any relaunch journal.
func (c *Controller) Status(ctx context.Context, id string) error {
	t, err := c.tasks().Open(id)
	if err != nil {
		return err
	}
	out := cli.Outcome{Word: "status", ID: id}
	out.Add("harness", t.Family()).Put(fault.OrNull("recorded_harness", t.RecordedHarness, "none")).Add("kind", string(t.Kind)).
		Add("backend", t.BackendName).Add("endpoint", t.Endpoint.Target).Add("worktree", t.Endpoint.Worktree).
		Add("model", orDefault(t.Task.Record.Model())).Add("effort", orDefault(t.Task.Record.Effort())).
		Add("permissions", permissionsOf(t.Task.Record.Permissions()))
	obs, screen := observe(ctx, t)
	out.Add("state", string(obs.State))
	if obs.ServerGone {
		out.Add("server", "gone")
	}
	if obs.State == backends.StateUnverified || !t.Ability.Classifier {
		out.Add("classifier", "none")
	}
	if obs.AgentStatus != "" {
		out.Add("agent_status", obs.AgentStatus)
	}
	now := time.Now()
	act := readActivity(t, obs, now, c.waits, screen)
	out.Add("activity", act.Word)
	if act.For != "" {
		out.Add("waiting_for", act.For)
	}
	out.Add("evidence", act.Evidence)
	out.Put(stallOf(t, obs, act.Word, now, c.tun.Control.StallAfter).facts()...)
	if obs.State == backends.StateAlive && act.Word != actBusy {
		// The newest turn's outcome, from the record: an idle agent may
		// have answered, given up after its retries, or been cancelled.
		if turn := act.lastTurn(t, obs); turn.Ended && turn.Outcome != "" {
			out.Add("turn", string(turn.Outcome))
			if turn.Error != "" {
				out.AddJSON("turn_error", turn.Error)
			}
		}
	}
	out.Put(fault.Int("events_refused", t.Store.RefusedEvents(id)))
	j, err := state.ReadJournal(t.Store.Journal(id).Journal)
	teardown, tornDown := teardownPhase(t.Store, id, nil)
	switch {
	case tornDown:
		out.Add("journal", teardown)
	case errors.Is(err, fs.ErrNotExist):
		out.Add("journal", "none")
	case err != nil:
		out.Add("journal", "unreadable")
	default:
		out.Add("journal", j.Phase)
		if r := j.Extra.Get(state.JournalRollback); r != "" {
			out.Add("rollback", r)
		}
	}
	if obs.Detail != "" {
		// The text line's tokens are a fixed contract, so the backend's
		// sentence (why the endpoint reads drifted, missing, ...) is a
		// notice there and the detail fact here.
		out.AddJSON("detail", obs.Detail)
	}
	if c.print.OutTTY && !c.print.JSON {
		return printStatusView(c.print, out, obs.Detail)
	}
	c.print.Outcome(out)
	// Of an alive agent the detail only names the process seen
	// (pane_current_command claude): said on every call, it would be noise.
	if !c.print.JSON && obs.Detail != "" && obs.State != backends.StateAlive {
		c.print.Notice("%s's endpoint %s: %s", id, t.Endpoint.Target, obs.Detail)
	}
	return nil
}

// permissionsOf is the recorded permission mode as status prints it: a
// record without one ran in auto; one fmctl cannot read is printed as is.
func permissionsOf(recorded string) string {
	if m, ok := harness.ParsePermissionMode(recorded); ok {
		return string(m)
	}
	return phrase.Printable(recorded)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
