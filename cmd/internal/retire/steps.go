package retire

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"fmctl/backends"
	"fmctl/cmd/internal/task"
	"fmctl/state"
)

// Tx is one teardown past its agent's stop.
type Tx struct {
	Plan    Plan
	Store   state.Store
	DataDir string
	Git     Git
	// Target is the resolved task, for closing its endpoint; nil once its
	// record has moved into the archive (only archiving is left then).
	Target *task.Target
	// Agent is how the agent ended (stopped, already-stopped, killed,
	// ...), journaled with every later phase.
	Agent string
	// Recovered: fm-control recover is finishing it (journaled as
	// recovered=yes).
	Recovered bool
}

// Done is what a finished teardown did.
type Done struct {
	Endpoint string // closed, already-gone
	Worktree string // removed, or kept-<why>
	Branch   string // deleted, kept, none
	Archived []string
}

// Enter journals phase, before its step is taken.
func (x *Tx) Enter(phase string) error {
	j := x.Plan.Journal()
	j.Phase = phase
	if x.Agent != "" {
		j.Extra.Set(state.JournalAgent, x.Agent)
	}
	if x.Recovered {
		j.Extra.Set(state.JournalRecovered, state.Yes)
	}
	if err := state.WriteJournal(x.Store.TeardownPath(x.Plan.ID), j); err != nil {
		return fmt.Errorf("write task %s's teardown journal: %w", x.Plan.ID, err)
	}
	return nil
}

// Finish takes the steps from phase on (closing, removing, archiving), each
// journaled first, then completes the journal and moves it into the
// archive. Every step can be taken again after a crash.
func (x *Tx) Finish(ctx context.Context, phase string) (Done, error) {
	var d Done
	steps := []struct {
		phase string
		run   func() error
	}{
		{state.PhaseClosing, func() (err error) { d.Endpoint, err = x.close(ctx); return err }},
		{state.PhaseRemoving, func() (err error) { d.Worktree, d.Branch, err = x.remove(ctx); return err }},
		{state.PhaseArchiving, func() (err error) { d.Archived, err = x.archive(); return err }},
	}
	started := false
	for _, s := range steps {
		if s.phase == phase {
			started = true
		}
		if !started {
			continue
		}
		if err := x.Enter(s.phase); err != nil {
			return d, err
		}
		if err := s.run(); err != nil {
			return d, err
		}
	}
	if !started && phase != state.PhaseComplete {
		return d, fmt.Errorf("task %s's teardown journal is in phase %s, which has no step to finish", x.Plan.ID, phase)
	}
	if err := x.Enter(state.PhaseComplete); err != nil {
		return d, err
	}
	return d, x.Store.MoveJournal(x.Plan.ID, x.Plan.Archive)
}

// close removes the task's endpoint, proven first to hold no agent (the
// stop, or --force's kill, came before). A gone endpoint is already closed.
func (x *Tx) close(ctx context.Context) (string, error) {
	t := x.Target
	if t == nil {
		return "", fmt.Errorf("task %s's record is gone, so its endpoint cannot be resolved to close", x.Plan.ID)
	}
	if err := state.Inject("close"); err != nil {
		return "", err
	}
	obs := t.Backend.AgentState(ctx, t.Endpoint)
	switch obs.State {
	case backends.StateMissing:
		return "already-gone", nil
	case backends.StateDead:
	default:
		if !(x.Plan.Force && x.Agent == "killed") {
			return "", fmt.Errorf("task %s's endpoint %s reads '%s' where its stopped agent should have left a shell; it was not closed", t.ID, t.Endpoint.Target, obs.State)
		}
	}
	if err := t.Backend.Kill(ctx, t.Endpoint); err != nil {
		if t.Backend.AgentState(ctx, t.Endpoint).State == backends.StateMissing {
			return "already-gone", nil
		}
		return "", fmt.Errorf("close task %s's endpoint %s: %v", t.ID, t.Endpoint.Target, backends.StderrOf(err))
	}
	return "closed", nil
}

// remove removes the worktree (git worktree remove) and deletes the branch,
// unless the plan keeps them. The work was judged landed (or discarded by
// --force) with the agent stopped, so both go with --force/-D: what is left
// is fmctl's own wiring or work already elsewhere.
func (x *Tx) remove(ctx context.Context) (worktree, branch string, err error) {
	p := x.Plan
	if err := state.Inject("remove"); err != nil {
		return "", "", err
	}
	if p.Keep != "" {
		return "kept-" + p.Keep, "kept", nil
	}
	if p.Worktree == "" || p.Project == "" {
		return "", "", fmt.Errorf("task %s's teardown journal names no worktree or project to remove", p.ID)
	}
	worktree = "removed"
	if _, err := os.Lstat(p.Worktree); errors.Is(err, fs.ErrNotExist) {
		worktree = "already-gone"
		_, _ = x.Git(ctx, p.Project, "worktree", "prune")
	}
	if worktree == "removed" && p.Secondmate {
		// A secondmate's home records (its crew's tasks and archive) are
		// not in git: they move into the archive before the checkout goes.
		var moves [][2]string
		for _, h := range SecondmateHome {
			moves = append(moves, [2]string{filepath.Join(p.Worktree, h), filepath.Join("home", h)})
		}
		if _, err := x.Store.ArchiveInto(p.Archive, moves); err != nil {
			return "", "", fmt.Errorf("archive secondmate %s's home records: %w", p.ID, err)
		}
	}
	if worktree == "removed" {
		if _, err := x.Git(ctx, p.Project, "worktree", "remove", "--force", p.Worktree); err != nil {
			return "", "", fmt.Errorf("git worktree remove %s: %v", p.Worktree, backends.StderrOf(err))
		}
	}
	if p.Branch == "" {
		return worktree, "none", nil
	}
	if _, err := x.Git(ctx, p.Project, "rev-parse", "--verify", "-q", "refs/heads/"+p.Branch); err != nil {
		return worktree, "already-gone", nil
	}
	if _, err := x.Git(ctx, p.Project, "branch", "-D", p.Branch); err != nil {
		return worktree, "", fmt.Errorf("git branch -D %s in %s: %v", p.Branch, p.Project, backends.StderrOf(err))
	}
	return worktree, "deleted", nil
}

// archive moves the records into the plan's archive directory.
func (x *Tx) archive() ([]string, error) {
	return x.Store.ArchiveTask(x.Plan.ID, x.DataDir, x.Plan.Archive)
}
