package control

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fmctl/backends"
	"fmctl/backends/git"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// checkpoint proves the work is safe to stop the agent over: the worktree is
// a git worktree root whose head and dirty state are recorded, and a
// secondmate's home is its own with readable child records.
func (c *Controller) checkpoint(ctx context.Context, t *task.Target) ([]state.Entry, error) {
	wt := t.Endpoint.Worktree
	if wt == "" {
		return nil, fault.Failed("task %s has no recorded worktree; refusing to relaunch without the copy holding its work", t.ID).Coded(fault.EBadWorktree)
	}
	info, err := os.Stat(wt)
	if err != nil || !info.IsDir() {
		return nil, fault.Failed("task %s's recorded worktree '%s' does not exist; refusing to stop its agent", t.ID, wt).Coded(fault.EBadWorktree)
	}
	real, err := filepath.EvalSymlinks(wt)
	if err != nil {
		return nil, fault.Failed("task %s's recorded worktree '%s' cannot be resolved: %v", t.ID, wt, err).Coded(fault.EBadWorktree)
	}
	top, err := c.git(ctx, wt, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fault.Failed("task %s's recorded worktree '%s' is not a git worktree (%s)", t.ID, wt, backends.StderrOf(err)).Coded(fault.EBadWorktree)
	}
	if realTop, _ := filepath.EvalSymlinks(top); realTop != real {
		return nil, fault.Failed("task %s's recorded worktree '%s' is not a worktree root (root is %s)", t.ID, wt, top).Coded(fault.EBadWorktree)
	}
	head := "unborn"
	if err := state.Inject("git-head"); err != nil {
		return nil, fault.Failed("task %s's worktree HEAD cannot be inspected: %v", t.ID, err)
	}
	if sha, err := c.git(ctx, wt, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		head = sha
	} else if _, err := c.git(ctx, wt, "symbolic-ref", "-q", "HEAD"); err != nil {
		return nil, fault.Failed("task %s's worktree HEAD cannot be inspected (%s)", t.ID, backends.StderrOf(err))
	}
	if err := state.Inject("git-status"); err != nil {
		return nil, fault.Failed("task %s's worktree status cannot be inspected: %v", t.ID, err)
	}
	status, err := c.git(ctx, wt, "status", "--porcelain", "--untracked-files=normal")
	if err != nil {
		return nil, fault.Failed("task %s's worktree status cannot be inspected (%s)", t.ID, backends.StderrOf(err))
	}
	dirty := "no"
	if status != "" {
		dirty = "yes"
	}
	lines := []state.Entry{{Key: "worktree_head", Value: head}, {Key: "worktree_dirty", Value: dirty}}
	if t.Kind == harness.KindSecondmate {
		n, err := checkSecondmateHome(t, wt)
		if err != nil {
			return nil, err
		}
		lines = append(lines, state.Entry{Key: "children", Value: strconv.Itoa(n)})
	}
	return lines, nil
}

// checkSecondmateHome refuses a home that is not the secondmate's own, or
// whose child records cannot be read, so a relaunch never strands child work.
func checkSecondmateHome(t *task.Target, home string) (int, error) {
	marker, err := os.ReadFile(filepath.Join(home, ".fm-secondmate-home"))
	m := strings.TrimSpace(string(marker))
	if err != nil || m != t.ID {
		if m == "" {
			m = "none"
		}
		return 0, fault.Failed("task %s's home '%s' is not marked as its own seeded secondmate home (marker: %s)", t.ID, home, phrase.Printable(m))
	}
	stateDir := filepath.Join(home, "state")
	if info, err := os.Stat(stateDir); err != nil || !info.IsDir() {
		return 0, fault.Failed("secondmate %s's home '%s' has no readable state directory", t.ID, home)
	}
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		return 0, fault.Failed("secondmate %s's child records cannot be traversed in %s: %v", t.ID, stateDir, err)
	}
	n := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".meta") {
			continue
		}
		p := filepath.Join(stateDir, e.Name())
		if _, err := state.ReadSmallFile(p, state.MaxRecordBytes); err != nil {
			return 0, fault.Failed("secondmate %s's child record %s is not a readable regular file (%v)", t.ID, p, err)
		}
		n++
	}
	return n, nil
}

// git runs one git command in dir, bounded and with the repository-location
// variables dropped (git.Run).
func (c *Controller) git(ctx context.Context, dir string, args ...string) (string, error) {
	return git.Run(ctx, c.runner, c.tun.GitTimeout, dir, args...)
}
