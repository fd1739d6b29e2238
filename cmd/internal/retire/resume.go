package retire

import (
	"context"
	"fmt"

	"fmctl/backends"
	"fmctl/harness"
	"fmctl/state"
)

// Settled is what recover did with a torn teardown.
type Settled struct {
	Phase  string // the phase the journal was left in
	Result string // completed or rolled-back
	Why    string // for rolled-back: what was left as it was
	Done   Done
}

// Resume settles a teardown journal a dead process left: before the agent
// is proven stopped it undoes (removes the journal; nothing else was
// changed), and from there on it finishes, judging the work again first
// when the stop was the step in flight.
func (x *Tx) Resume(ctx context.Context, j state.Journal) (Settled, error) {
	s := Settled{Phase: j.Phase}
	x.Agent, x.Recovered = j.Extra.Get(state.JournalAgent), true
	switch j.Phase {
	case state.PhaseJudged:
		return x.undo(s, "nothing was touched")
	case state.PhaseStopping:
		if x.Target == nil {
			return s, fmt.Errorf("task %s's record is gone mid-teardown; read %s before acting", x.Plan.ID, x.Store.TeardownPath(x.Plan.ID))
		}
		obs := x.Target.Backend.AgentState(ctx, x.Target.Endpoint)
		switch obs.State {
		case backends.StateAlive:
			return x.undo(s, "its agent is still running at "+x.Target.Endpoint.Target)
		case backends.StateDead, backends.StateMissing:
		default:
			return s, fmt.Errorf("task %s's teardown was torn while stopping its agent, and %s reads '%s'; look at it, then run fm-control recover %s again", x.Plan.ID, x.Target.Endpoint.Target, obs.State, x.Plan.ID)
		}
		if x.Agent == "" {
			x.Agent = "stopped"
		}
		left, err := Recheck(ctx, x.Git, x.Plan, harness.WorktreeWiring())
		if err != nil {
			return s, err
		}
		if left != "" {
			return x.undo(s, fmt.Sprintf("its agent is stopped, but its worktree %s holds work that has not landed: %s", x.Plan.Worktree, left))
		}
		return x.finish(ctx, s, state.PhaseClosing)
	}
	return x.finish(ctx, s, j.Phase)
}

func (x *Tx) finish(ctx context.Context, s Settled, from string) (Settled, error) {
	d, err := x.Finish(ctx, from)
	s.Done = d
	if err != nil {
		return s, err
	}
	s.Result = "completed"
	return s, nil
}

// undo ends a teardown that changed nothing that needs putting back: its
// journal goes, and the task stays as it is.
func (x *Tx) undo(s Settled, why string) (Settled, error) {
	if err := x.Abandon(); err != nil {
		return s, err
	}
	s.Result, s.Why = "rolled-back", why
	return s, nil
}

// Abandon removes the journal of a teardown that stops before anything it
// cannot put back (the worktree, branch, endpoint and records are as they
// were).
func (x *Tx) Abandon() error {
	if err := state.RemoveIfExists(x.Store.TeardownPath(x.Plan.ID)); err != nil {
		return fmt.Errorf("remove task %s's teardown journal: %w", x.Plan.ID, err)
	}
	return nil
}
