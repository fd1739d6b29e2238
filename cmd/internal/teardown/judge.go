package teardown

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/retire"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/state"
)

// judge decides the teardown's plan: what is removed, what is kept and why,
// and (under force) what is discarded. It changes nothing; a refusal names
// what to do instead.
func (r Runner) judge(ctx context.Context, t *task.Target, force bool) (retire.Plan, error) {
	rec := t.Task.Record
	secondmate := t.Kind == harness.KindSecondmate
	p := retire.Plan{
		ID: t.ID, Worktree: t.Endpoint.Worktree, Project: rec.Get(state.KeyProject),
		Archive: t.Store.ArchivePath(t.ID, time.Now()), Force: force, Secondmate: secondmate,
	}
	// The archive is checked now, not when the records move: by then the
	// worktree is gone and the teardown could only wait for recover.
	if err := state.NoSymlinkUnder(t.Store.Dir, p.Archive); err != nil {
		return p, fault.Failed("task %s's records cannot be archived: %v; nothing was changed", t.ID, err).
			Hint("make %s a plain directory (or remove it), then tear down again", filepath.Dir(p.Archive))
	}
	if p.Project == "" {
		// A worktree adopted without --project records none: it is
		// judged against its own repository.
		p.Project = p.Worktree
	}
	var discards []string
	if secondmate && p.Worktree != "" {
		if err := inFlight(t, p.Worktree); err != nil {
			return p, err
		}
	}
	if t.Kind == harness.KindScout {
		if missing := scoutReport(t); missing != "" {
			if !force {
				return p, fault.Failed("scout %s's work product %s is missing (%s); nothing was changed", t.ID, reportPath(t), missing).Coded(fault.ENotLanded).
					Hint("have the scout write its report there, or read what it left in %s", p.Worktree).
					Hint("or tear it down without a report: fm-teardown %s --force", t.ID)
			}
			discards = append(discards, "no report at "+reportPath(t))
		}
	}
	if sharer := sharedWith(t); sharer != "" {
		p.Keep = retire.KeepShared
		return withDiscards(p, discards), nil
	}
	w, err := retire.CheckLanded(ctx, r.git, p.Worktree, p.Project, retire.Ignore(harness.WorktreeWiring(), secondmate))
	switch {
	case errors.Is(err, retire.ErrNoWorktree):
		p.Keep = retire.KeepGone
		return withDiscards(p, discards), nil
	case err != nil && force:
		p.Keep = retire.KeepNoProject
		return withDiscards(p, append(discards, "nothing in git, which could not judge the work ("+err.Error()+"), so the worktree and branch are left as they are")), nil
	case err != nil:
		return p, fault.Failed("task %s's work cannot be judged: %v; nothing was changed", t.ID, err).Coded(fault.EBadWorktree).
			Hint("restore the project at %s (the record's project=)", p.Project).
			Hint("or archive the task and leave its worktree and branch untouched: fm-teardown %s --force", t.ID)
	}
	if w.Main {
		p.Keep = retire.KeepMain
		return withDiscards(p, discards), nil
	}
	if w.Elsewhere != "" {
		return p, fault.Failed("task %s's branch %s is also checked out at %s, so it cannot be deleted; nothing was changed", t.ID, w.Branch, w.Elsewhere).Coded(fault.EBadWorktree).
			Hint("switch that worktree off it (git -C '%s' switch --detach) or remove it, then tear down again", w.Elsewhere)
	}
	p.Branch = w.Branch
	if left := retire.Unlanded(w); left != "" {
		if !force {
			return p, notLanded(t, w, left)
		}
		discards = append(discards, left)
	}
	return withDiscards(p, discards), nil
}

func withDiscards(p retire.Plan, discards []string) retire.Plan {
	if p.Force {
		p.Discards = strings.Join(discards, "; ")
		if p.Discards == "" {
			p.Discards = "nothing"
		}
	}
	return p
}

// notLanded refuses work that has not landed, with the command that lands
// each part of it.
func notLanded(t *task.Target, w retire.Work, left string) error {
	e := fault.Failed("task %s's work has not landed: %s; nothing was changed", t.ID, left).Coded(fault.ENotLanded)
	if w.Branch == "" {
		e.Hint("check its branch out again (git -C '%s' switch <branch>), or put the commit on one", w.Worktree)
	}
	if len(w.Changes) > 0 {
		e.Hint("commit what is worth keeping (git -C '%s' status)", w.Worktree)
	}
	if w.Unlanded > 0 && w.Against == "remote-tracking branches" {
		e.Hint("push the branch (git -C '%s' push -u origin %s)", w.Worktree, w.Branch)
	} else if w.Unlanded > 0 {
		e.Hint("merge it (git -C '%s' merge %s, on %s)", w.Project, w.Branch, strings.TrimPrefix(w.Against, "refs/heads/"))
	}
	return e.Hint("or fm-teardown %s --force, which discards %s", t.ID, left)
}

// inFlight refuses a secondmate whose home still records tasks of its own:
// tearing it down would strand them.
func inFlight(t *task.Target, home string) error {
	children := state.Store{Dir: filepath.Join(home, "state")}.TaskIDs()
	if len(children) == 0 {
		return nil
	}
	e := fault.Failed("secondmate %s's home %s still has %d task(s) of its own (%s); nothing was changed", t.ID, home, len(children), strings.Join(children, ", ")).Coded(fault.ETasksInFlight)
	for _, c := range children {
		e.Hint("FM_HOME='%s' fm-teardown %s", home, c)
	}
	return e
}

func reportPath(t *task.Target) string { return filepath.Join(t.Home.Data, t.ID, "report.md") }

// scoutReport says what is wrong with a scout's report, "" when it is a
// regular file reached through no symlink.
func scoutReport(t *task.Target) string {
	if err := state.RegularUnder(t.Home.Data, reportPath(t)); err != nil {
		return err.Error()
	}
	return ""
}

// sharedWith names another task of the home whose record names the same
// worktree: the worktree is still in use, so it stays.
func sharedWith(t *task.Target) string {
	for _, id := range t.Store.TaskIDs() {
		if id == t.ID {
			continue
		}
		other, err := t.Store.LoadTask("fm-teardown", id)
		if err == nil && other.Record.Worktree() != "" && filepath.Clean(other.Record.Worktree()) == filepath.Clean(t.Endpoint.Worktree) {
			return id
		}
	}
	return ""
}
