// Package retire is a teardown's transaction once its agent is stopped:
// close the endpoint, remove the worktree and branch, and move the task's
// records into the archive, each step journaled (state/<id>.teardown)
// before it is taken, and the landed-work test that decides whether the
// worktree may go (landed.go). fm-teardown runs it; fm-control recover
// finishes it from the phase a dead process left.
package retire

import (
	"context"
	"fmt"
	"strings"

	"fmctl/state"
)

// Plan is a teardown's fixed facts, journaled before anything is touched.
type Plan struct {
	ID       string
	Worktree string // the task's worktree ("" when the record names none)
	Project  string
	Branch   string // the branch to delete; "" keeps every branch
	// Keep says why the worktree stays (Keep* below); "" removes it.
	Keep       string
	Archive    string // state/archive/<id>-<time>
	Force      bool
	Discards   string // what --force discards, in words
	Secondmate bool   // the worktree is the secondmate's home: its records are archived too
}

// Why a worktree is kept.
const (
	KeepMain      = "main-checkout" // the repository's own checkout, never removed
	KeepShared    = "shared"        // another task's record names it too
	KeepNoProject = "no-project"    // the project cannot be read (only with --force)
	KeepGone      = "gone"          // nothing is left to remove
)

// Journal is the plan as the teardown journal's first entry.
func (p Plan) Journal() state.Journal {
	var extra state.Record
	extra.Set(state.KeyWorktree, p.Worktree)
	extra.Set(state.KeyProject, p.Project)
	extra.Set(state.JournalBranch, p.Branch)
	extra.Set(state.JournalKeep, p.Keep)
	extra.Set(state.JournalArchive, p.Archive)
	if p.Force {
		extra.Set(state.JournalForce, state.Yes)
		extra.Set(state.JournalDiscards, p.Discards)
	}
	if p.Secondmate {
		extra.Set(state.JournalSecond, state.Yes)
	}
	var head state.Record
	head.Set("task", p.ID)
	return state.Journal{Header: head, Phase: state.PhaseJudged, Extra: extra}
}

// PlanOf reads a plan back from its journal.
func PlanOf(j state.Journal) Plan {
	x := j.Extra
	// ReadJournal files worktree= with relaunch's header keys.
	wt := j.Header.Get(state.KeyWorktree)
	if wt == "" {
		wt = x.Get(state.KeyWorktree)
	}
	return Plan{
		ID: j.Header.Get("task"), Worktree: wt, Project: x.Get(state.KeyProject),
		Branch: x.Get(state.JournalBranch), Keep: x.Get(state.JournalKeep), Archive: x.Get(state.JournalArchive),
		Force: x.Get(state.JournalForce) == state.Yes, Discards: x.Get(state.JournalDiscards),
		Secondmate: x.Get(state.JournalSecond) == state.Yes,
	}
}

// SecondmateHome names the records fm-spawn provisions in a secondmate's
// worktree: not the task's work, and archived with it.
var SecondmateHome = []string{"state", "data", "config", ".fm-secondmate-home"}

// Ignore is what the landed-work test leaves out of a worktree's status:
// fmctl's own telemetry wiring, and a secondmate's home records.
func Ignore(wiring map[string]bool, secondmate bool) func(string) bool {
	return func(path string) bool {
		if wiring[path] {
			return true
		}
		if secondmate {
			first, _, _ := strings.Cut(path, "/")
			for _, h := range SecondmateHome {
				if first == h {
					return true
				}
			}
		}
		return false
	}
}

// Unlanded says, in words, what a worktree holds that has not landed; ""
// when it all has.
func Unlanded(w Work) string {
	var parts []string
	if w.Branch == "" {
		parts = append(parts, fmt.Sprintf("a detached HEAD at %.12s", w.Head))
	}
	if w.Unlanded > 0 {
		parts = append(parts, fmt.Sprintf("%d commit(s) not on %s (%s)", w.Unlanded, w.Against, strings.Join(w.Commits, "; ")))
	}
	if n := len(w.Changes); n > 0 {
		shown := w.Changes
		if n > 3 {
			shown = append(shown[:3:3], "...")
		}
		parts = append(parts, fmt.Sprintf("%d uncommitted or untracked path(s) (%s)", n, strings.Join(shown, ", ")))
	}
	return strings.Join(parts, ", ")
}

// Recheck judges the work again once the agent is stopped: it may have
// committed or written files after the first judgement. A forced plan
// discards whatever is there.
func Recheck(ctx context.Context, git Git, p Plan, wiring map[string]bool) (string, error) {
	if p.Force || p.Keep != "" || p.Worktree == "" {
		return "", nil
	}
	w, err := CheckLanded(ctx, git, p.Worktree, p.Project, Ignore(wiring, p.Secondmate))
	if err != nil {
		return "", err
	}
	return Unlanded(w), nil
}
