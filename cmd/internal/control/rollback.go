package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"fmctl/backends"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/launch"
	"fmctl/cmd/internal/task"
	"fmctl/state"
)

// outcomeFacts is what is known about the replacement when a transaction
// fails after its launch began.
type outcomeFacts struct {
	tx        string // the transaction id handed to fm-spawn
	confirmed bool   // the replacement was seen alive
	placed    bool   // the replacement was typed into the endpoint
}

// settlement is a rollback decision: its journal token and the plain
// sentence that says whether an agent runs and where the work is.
type settlement struct {
	Rollback string
	Sentence string
}

// settle decides and performs the rollback for a transaction that stopped
// in phase. It is shared by a failing relaunch and by `fm-control recover`.
func settle(ctx context.Context, t *task.Target, paths state.JournalPaths, phase, toHarness string, of outcomeFacts) settlement {
	wt, target := t.Endpoint.Worktree, t.Endpoint.Target
	switch phase {
	case state.PhaseCheckpoint, state.PhaseNoted:
		if err := restoreBrief(t, paths); err != nil {
			return briefNotRestored(t, paths, err)
		}
		return settlement{"instructions-restored", fmt.Sprintf("relaunch of %s was refused before its agent was touched; nothing changed", t.ID)}
	case state.PhaseStopping:
		obs := t.Backend.AgentState(ctx, t.Endpoint)
		switch obs.State {
		case backends.StateAlive:
			if err := restoreBrief(t, paths); err != nil {
				return briefNotRestored(t, paths, err)
			}
			return settlement{"instructions-restored-agent-alive", fmt.Sprintf("relaunch of %s failed while stopping its agent, which is still running at %s; its instructions were restored", t.ID, target)}
		case backends.StateDead, backends.StateMissing:
			return settlement{"prior-record-kept-agent-dead", fmt.Sprintf("relaunch of %s failed after its agent stopped; no agent is running, and its work plus progress note are preserved at %s", t.ID, wt)}
		}
		return settlement{"none-agent-state-" + string(obs.State), fmt.Sprintf("relaunch of %s failed while stopping its agent, and %s reads '%s', so nothing was rolled back; look at it before acting", t.ID, target, obs.State)}
	}
	switch {
	case of.confirmed:
		return settlement{"none-new-agent-confirmed", fmt.Sprintf("%s's replacement is running on %s at %s, but transaction completion could not be persisted", t.ID, toHarness, target)}
	case of.placed:
		return settlement{"none-replacement-placed", fmt.Sprintf("%s's replacement was placed on %s at %s but had not come up; its work is preserved at %s", t.ID, toHarness, target, wt)}
	case of.tx != "" && publishedTx(t) == of.tx:
		return settlement{"none-new-record-kept", fmt.Sprintf("%s was relaunched on %s but no running agent could be confirmed; the new record is kept and its work is preserved at %s", t.ID, toHarness, wt)}
	}
	return settlement{"prior-record-kept", fmt.Sprintf("%s's agent was stopped but the replacement did not launch; no agent is running, and its work plus the recorded progress note are preserved at %s", t.ID, wt)}
}

// publishedTx reads the transaction id in the task's current record.
func publishedTx(t *task.Target) string {
	task, err := t.Store.LoadTask("fm-control", t.ID)
	if err != nil {
		return ""
	}
	return task.Record.ControlRelaunchTx()
}

// restoreBrief puts the prior brief back byte for byte (there is nothing to
// restore when the note never reached the brief).
func restoreBrief(t *task.Target, paths state.JournalPaths) error {
	prior, err := state.ReadSmallFile(paths.BriefPrior, state.MaxBriefBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return state.WriteAtomic(t.Home.BriefPath(t.ID), prior)
}

func briefNotRestored(t *task.Target, paths state.JournalPaths, err error) settlement {
	return settlement{"instructions-restore-failed", fmt.Sprintf("relaunch of %s stopped before its agent was replaced, but its brief could not be restored (%v); the prior brief is kept at %s", t.ID, err, paths.BriefPrior)}
}

// fail settles the transaction, records the failure in the journal and
// returns the refusal to print.
func (x *relaunchTx) fail(ctx context.Context, phase string, cause error, of outcomeFacts) error {
	s := settle(ctx, x.t, x.paths, phase, x.prof.To.Name, of)
	x.journal.Phase = state.FailedPrefix + phase
	x.journal.Extra = state.Record{Entries: []state.Entry{{Key: state.JournalRollback, Value: s.Rollback}}}
	if err := state.WriteJournal(x.paths.Journal, x.journal); err != nil {
		x.c.print.Warn("the relaunch journal %s could not record the failure: %v", x.paths.Journal, err)
	}
	// A replacement whose shell came back is launch-failed, as from
	// fm-spawn, with the pane's words and the pin that fixes it.
	// What the rollback left (does an agent run, where is the work) leads
	// the hints: it decides what the caller does next.
	e := fault.Failed("%w", cause).Coded(fault.ERelaunchFailed).
		With("id", x.t.ID, "phase", state.FailedPrefix+phase, "rollback", s.Rollback).
		Hint("%s", s.Sentence).
		Hint("the relaunch journal says phase=failed:%s rollback=%s", phase, s.Rollback)
	return launch.Explain(e, cause, x.prof.To)
}
