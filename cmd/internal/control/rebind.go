package control

import (
	"context"
	"fmt"
	"strings"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/state"
)

// runRebind re-points a drifted record at the one pane proven to be the
// task's: it carries the task's label or the recorded pane id, sits in the
// recorded worktree, and runs the recorded harness or nothing. A record
// that already resolves is left byte-identical, except that one written
// before the id keys existed gains them.
func (c *Controller) runRebind(ctx context.Context, t *task.Target) error {
	pf, ok := t.Backend.(backends.PaneFinder)
	if !ok {
		return fault.Failed("fmctl's %s adapter cannot list panes to re-point a record, so rebind cannot correct task %s there; nothing was changed", t.BackendName, t.ID).Coded(fault.ENoAdapter)
	}
	obs := t.Backend.AgentState(ctx, t.Endpoint)
	hasIDs := t.Task.Record.Get(state.KeyTmuxPane) != ""
	switch obs.State {
	case backends.StateUnreadable:
		return fault.Failed("task %s's endpoint %s cannot be read (%s); rebind needs the backend to answer, nothing was changed", t.ID, t.Endpoint.Target, obs.Detail).Coded(fault.EEndpointUnreadable)
	case backends.StateDrifted, backends.StateMissing:
	default:
		if hasIDs {
			return c.notDrifted(t, obs)
		}
	}
	p, err := findClaimant(ctx, pf, t, obs)
	if err != nil {
		if !hasIDs && obs.State != backends.StateDrifted && obs.State != backends.StateMissing {
			return c.notDrifted(t, obs)
		}
		return err
	}
	fields, err := pf.Claim(ctx, p, state.Label(t.ID))
	if err != nil {
		return fault.Failed("could not re-point task %s at %s: %v; the record is unchanged", t.ID, p.Describe(), err)
	}
	rec := t.Task.Record.Clone()
	for _, f := range fields {
		rec.Set(f.Key, f.Value)
	}
	data, err := rec.Bytes()
	if err != nil {
		return fault.Failed("task %s's rebound record cannot be written: %v; the record is unchanged", t.ID, err)
	}
	ep := t.Endpoint
	ep.Target, ep.Fields = rec.Window(), rec.Map()
	switch {
	case string(data) != string(t.Task.Raw):
		if err := t.Backend.ValidateRecord(ep); err != nil {
			return fault.Failed("the rebound record for task %s does not pass endpoint validation (%v); the record is unchanged", t.ID, err)
		}
		if err := state.ReplaceRecord(t.Task.Path, t.Task.Raw, data); err != nil {
			return fault.Failed("task %s's record could not be rewritten: %v", t.ID, err)
		}
	case obs.State != backends.StateDrifted && obs.State != backends.StateMissing:
		return c.notDrifted(t, obs)
	}
	// Otherwise the record already named the pane, and Claim gave its
	// window the label back: the endpoint resolves again as recorded.
	out := cli.Outcome{Word: "rebound", ID: t.ID}
	out.Add("backend", t.BackendName).Add("endpoint", ep.Target).Add("was", previousPlace(p, t.Task.Record.Window(), ep.Target)).
		Add("pane", p.ID).Add("state", string(p.Obs.State)).Add("worktree", t.Endpoint.Worktree)
	c.print.Outcome(out)
	return nil
}

// previousPlace is the place a rebind moved the task away from: where the
// pane was found when its window had been renamed (the record was right,
// the window is renamed back, so the record's window equals the new
// endpoint), else the record's old window (the window moved with its
// name, and the record follows it).
func previousPlace(p backends.Pane, recorded, now string) string {
	if p.Where != "" && p.Where != now {
		return p.Where
	}
	return recorded
}

func (c *Controller) notDrifted(t *task.Target, obs backends.Observation) error {
	out := cli.Outcome{Word: "not-drifted", ID: t.ID}
	out.Add("backend", t.BackendName).Add("endpoint", t.Endpoint.Target).Add("state", string(obs.State))
	why := fmt.Sprintf("task %s's recorded endpoint %s still resolves (state: %s); there is nothing to correct, the record is unchanged", t.ID, t.Endpoint.Target, obs.State)
	c.print.Outcome(*out.AddJSON("detail", why))
	if !c.print.JSON {
		c.print.Notice("%s", why)
	}
	return nil
}

// findClaimant returns the one pane that may become the task's endpoint.
func findClaimant(ctx context.Context, pf backends.PaneFinder, t *task.Target, obs backends.Observation) (backends.Pane, error) {
	wt := t.Endpoint.Worktree
	panes, err := pf.PanesIn(ctx, wt)
	if err != nil {
		return backends.Pane{}, fault.Failed("cannot list the panes in task %s's worktree %s: %v; nothing was changed", t.ID, wt, err)
	}
	label, recorded := state.Label(t.ID), t.Task.Record.Get(state.KeyTmuxPane)
	var claimants []backends.Pane
	var names []string
	for _, p := range panes {
		if other, ok := state.LabelTask(p.Label); ok && other != t.ID && p.ID == recorded {
			// tmux numbers panes afresh after a server restart, so the
			// recorded id alone does not make another task's window ours.
			return backends.Pane{}, fault.Failed("%s has task %s's recorded pane id but task %s's label %s; task %s's record is unchanged", p.Describe(), t.ID, other, p.Label, t.ID).Coded(fault.EForeignEndpoint).
				Hint("a tmux server restart reuses pane ids, so the id alone does not make the window %s's", t.ID).
				Hint("if it is %s's own window, rename it %s and rebind again", t.ID, label)
		}
		if p.Label == label || (recorded != "" && p.ID == recorded) {
			claimants = append(claimants, p)
			names = append(names, p.Describe())
		}
	}
	switch len(claimants) {
	case 0:
		return backends.Pane{}, fault.Failed("no pane in task %s's worktree %s carries its label %s or its recorded pane id; the record is unchanged", t.ID, wt, label).Coded(fault.ENoPane).
			With("state", string(obs.State), "detail", obs.Detail).
			Hint("its endpoint %s reads '%s' (%s)", t.Endpoint.Target, obs.State, obs.Detail)
	case 1:
	default:
		return backends.Pane{}, fault.Failed("task %s's identity is carried by %d panes in its worktree (%s); refusing to pick one, the record is unchanged", t.ID, len(claimants), strings.Join(names, ", ")).Coded(fault.EAmbiguousPane)
	}
	p := claimants[0]
	switch p.Obs.State {
	case backends.StateDead:
		return p, nil
	case backends.StateAlive, backends.StateSuspended:
		for _, n := range p.Obs.Names {
			if h, ok := harness.Family(n); ok && h.Name == t.Harness.Name {
				return p, nil
			}
		}
		return backends.Pane{}, fault.Failed("%s runs %s, not task %s's recorded harness %s; refusing to re-point the record at another agent, the record is unchanged", p.Describe(), strings.Join(p.Obs.Names, ","), t.ID, t.Harness.Name).Coded(fault.EForeignAgent)
	}
	return backends.Pane{}, fault.Failed("%s reads '%s' (%s), neither task %s's %s nor an agent-free shell; refusing to re-point the record at it, the record is unchanged", p.Describe(), p.Obs.State, p.Obs.Detail, t.ID, t.Harness.Name).Coded(fault.EAgentUnverified)
}
