package retire

// The landed-work test decides whether a task's work has landed: whether
// removing its worktree and branch would lose anything a person could want.
// It only reads the repository, through a git runner the caller supplies.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Git runs `git -C dir args...` and returns its trimmed stdout (the CLI
// passes git.Run, bounded by FM_GIT_TIMEOUT; tests pass real git or a
// fake).
type Git func(ctx context.Context, dir string, args ...string) (string, error)

// The reasons a worktree's work cannot be judged at all.
var (
	ErrNoWorktree    = errors.New("no worktree to judge")
	ErrNoProject     = errors.New("no project repository to judge against")
	ErrForeign       = errors.New("not a worktree of the task's project")
	ErrNoDefault     = errors.New("no default branch to judge against")
	ErrGitUnreadable = errors.New("git could not read the repository")
)

// Work is what a task's worktree holds that a teardown would remove.
type Work struct {
	Worktree string
	Project  string
	// Main: the worktree is the repository's main checkout, which is the
	// user's own and is never removed.
	Main bool
	// Branch is the branch checked out in the worktree; "" when its HEAD is
	// detached (Head names the commit then).
	Branch string
	Head   string
	// Elsewhere is another worktree that has Branch checked out too.
	Elsewhere string
	// Against says what landing was measured against: "remote-tracking
	// branches", or the local default branch of a project without a remote.
	Against string
	// Unlanded is how many commits of HEAD are not reachable from Against;
	// Commits shows the newest few ("<sha> <subject>").
	Unlanded int
	Commits  []string
	// Changes are the worktree's uncommitted and untracked paths (git status
	// --porcelain lines), less those the caller ignores.
	Changes []string
}

// Landed reports whether removing the worktree and branch loses nothing:
// every commit is reachable from Against and nothing is left uncommitted.
// A detached HEAD is never landed: its commit has no branch to keep it.
func (w Work) Landed() bool {
	return w.Branch != "" && w.Unlanded == 0 && len(w.Changes) == 0
}

// shownCommits bounds the unlanded commits a refusal names.
const shownCommits = 5

// CheckLanded reads worktree wt of the repository at project. ignore drops status
// paths that are not the task's work (fmctl's own telemetry wiring, a
// secondmate's home records); nil keeps every path.
func CheckLanded(ctx context.Context, git Git, wt, project string, ignore func(path string) bool) (Work, error) {
	w := Work{Worktree: wt, Project: project}
	if info, err := os.Lstat(wt); err != nil || !info.IsDir() {
		return w, fmt.Errorf("worktree %s is not a directory: %w", wt, ErrNoWorktree)
	}
	if info, err := os.Lstat(project); project == "" || err != nil || !info.IsDir() {
		return w, fmt.Errorf("project %q is not a directory: %w", project, ErrNoProject)
	}
	list, err := git(ctx, project, "worktree", "list", "--porcelain")
	if err != nil {
		return w, fmt.Errorf("project %s: git worktree list: %v: %w", project, err, ErrNoProject)
	}
	trees := parseWorktrees(list)
	self := -1
	for i, t := range trees {
		if sameDir(t.Path, wt) {
			self = i
		}
	}
	if self < 0 {
		return w, fmt.Errorf("%s is not among the worktrees of %s: %w", wt, project, ErrForeign)
	}
	w.Main = self == 0
	w.Head, w.Branch = trees[self].Head, trees[self].Branch
	for i, t := range trees {
		if i != self && w.Branch != "" && t.Branch == w.Branch {
			w.Elsewhere = t.Path
		}
	}
	if err := w.readCommits(ctx, git, trees); err != nil {
		return w, err
	}
	// Version 2 lines start with their type, never a space, so the
	// runner's trimming of the output cannot shift the first line's path.
	status, err := git(ctx, wt, "status", "--porcelain=v2", "--untracked-files=all")
	if err != nil {
		return w, fmt.Errorf("git status in %s: %v: %w", wt, err, ErrGitUnreadable)
	}
	for _, line := range strings.Split(status, "\n") {
		xy, path, ok := statusPath(line)
		if ok && (ignore == nil || !ignore(path)) {
			w.Changes = append(w.Changes, xy+" "+path)
		}
	}
	return w, nil
}

// statusPath reads one git status --porcelain=v2 line: its two-letter
// state in the short format's letters (" M", "??") and its path.
func statusPath(line string) (xy, path string, ok bool) {
	fields := map[string]int{"1": 9, "2": 10, "u": 11} // the path is the last of n fields
	kind, rest, _ := strings.Cut(line, " ")
	if kind == "?" {
		return "??", rest, rest != ""
	}
	n, known := fields[kind]
	parts := strings.SplitN(line, " ", n)
	if !known || len(parts) < n {
		return "", "", false
	}
	path, _, _ = strings.Cut(parts[n-1], "\t") // a rename's original path follows a tab
	return strings.ReplaceAll(parts[1], ".", " "), path, true
}

// readCommits counts the commits of HEAD that have not landed: not on any
// remote-tracking branch, or, in a project without a remote, not on its
// default branch.
func (w *Work) readCommits(ctx context.Context, git Git, trees []worktree) error {
	remotes, err := git(ctx, w.Project, "remote")
	if err != nil {
		return fmt.Errorf("git remote in %s: %v: %w", w.Project, err, ErrGitUnreadable)
	}
	not := []string{"--not", "--remotes"}
	w.Against = "remote-tracking branches"
	if remotes == "" {
		def, err := defaultBranch(ctx, git, w.Project, trees, w.Branch)
		if err != nil {
			return err
		}
		if def == w.Branch {
			// The default branch itself: nothing else it could land on.
			w.Against = "refs/heads/" + def
			return nil
		}
		not = []string{"--not", "refs/heads/" + def}
		w.Against = "refs/heads/" + def
	}
	count, err := git(ctx, w.Worktree, append([]string{"rev-list", "--count", "HEAD"}, not...)...)
	if err != nil {
		return fmt.Errorf("git rev-list in %s: %v: %w", w.Worktree, err, ErrGitUnreadable)
	}
	if w.Unlanded, err = strconv.Atoi(count); err != nil {
		return fmt.Errorf("git rev-list --count said %q: %w", count, ErrGitUnreadable)
	}
	if w.Unlanded == 0 {
		return nil
	}
	shown, err := git(ctx, w.Worktree, append([]string{"log", "--format=%h %s", "-n", strconv.Itoa(shownCommits), "HEAD"}, not...)...)
	if err != nil {
		return fmt.Errorf("git log in %s: %v: %w", w.Worktree, err, ErrGitUnreadable)
	}
	w.Commits = strings.Split(shown, "\n")
	return nil
}

// defaultBranch is the local branch a project without a remote lands work
// on: the branch its main checkout has out, else init.defaultBranch, main
// or master, whichever exists.
func defaultBranch(ctx context.Context, git Git, project string, trees []worktree, task string) (string, error) {
	candidates := []string{trees[0].Branch}
	if d, err := git(ctx, project, "config", "--get", "init.defaultBranch"); err == nil {
		candidates = append(candidates, d)
	}
	candidates = append(candidates, "main", "master")
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if _, err := git(ctx, project, "rev-parse", "--verify", "-q", "refs/heads/"+c); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("project %s has no remote, and no default branch (its main checkout is detached and neither init.defaultBranch, main nor master exists) for %s to be merged into: %w", project, orDetached(task), ErrNoDefault)
}

func orDetached(branch string) string {
	if branch == "" {
		return "the detached HEAD"
	}
	return "branch " + branch
}

// worktree is one entry of git worktree list --porcelain.
type worktree struct {
	Path, Head, Branch string
}

func parseWorktrees(out string) []worktree {
	var trees []worktree
	for _, block := range strings.Split(out, "\n\n") {
		var t worktree
		for _, line := range strings.Split(block, "\n") {
			key, value, _ := strings.Cut(line, " ")
			switch key {
			case "worktree":
				t.Path = value
			case "HEAD":
				t.Head = value
			case "branch":
				t.Branch = strings.TrimPrefix(value, "refs/heads/")
			}
		}
		if t.Path != "" {
			trees = append(trees, t)
		}
	}
	return trees
}

// sameDir compares two directories by what they resolve to (a temporary
// directory under a symlinked /tmp is the same place both ways).
func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
