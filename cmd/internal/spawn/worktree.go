package spawn

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"fmctl/backends"
	"fmctl/backends/git"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/phrase"
)

// worktreePlan is where a task's agent will work. A planned worktree is
// only added (create) once the task's guards have passed, and a spawn that
// fails afterwards removes it again (remove), so a refusal leaves no
// worktree or branch behind.
type worktreePlan struct {
	Dir     string // absolute worktree root
	Project string // absolute project root, recorded as project=
	// new worktree only: the branch to add it on and the commits its head
	// must descend from (the base, and the base's upstream when it has one).
	Branch   string
	BaseSHA  string
	Upstream string
	New      bool
}

// planWorktree decides the task's worktree: --worktree adopts an existing
// git worktree root; --project alone plans a new one. It changes nothing
// but a best-effort fetch of the project's origin.
func (s Spawner) planWorktree(ctx context.Context, home config.Home, f config.File, req Request, kind harness.Kind) (worktreePlan, error) {
	switch {
	case req.Worktree != "":
		if req.given["--base"] || req.given["--branch"] {
			return worktreePlan{}, fault.Usage("--base and --branch shape a new worktree; --worktree adopts an existing one, so drop them or drop --worktree")
		}
		return s.adoptWorktree(ctx, req, kind)
	case req.Project != "":
		return s.planNewWorktree(ctx, home, f, req)
	}
	return worktreePlan{}, fault.Usage("fm-spawn needs --project REPO (creates the task's worktree) or --worktree DIR (adopts an existing one)")
}

// gitRoot returns the worktree root containing dir, or why there is none.
func (s Spawner) gitRoot(ctx context.Context, dir string) (string, error) {
	top, err := git.Run(ctx, s.Runner, s.Tunables.GitTimeout, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", errors.New(backends.StderrOf(err))
	}
	return top, nil
}

func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// adoptWorktree requires --worktree to be the root of a clean git worktree
// of --project's repository (when named).
func (s Spawner) adoptWorktree(ctx context.Context, req Request, kind harness.Kind) (worktreePlan, error) {
	wt, err := filepath.Abs(req.Worktree)
	if err != nil {
		return worktreePlan{}, fault.Failed("--worktree '%s': %v", phrase.Printable(req.Worktree), err).Coded(fault.EBadWorktree)
	}
	if info, err := os.Stat(wt); err != nil || !info.IsDir() {
		return worktreePlan{}, fault.Failed("--worktree '%s' is not a directory", phrase.Printable(req.Worktree)).Coded(fault.EBadWorktree).
			Hint("create the task's worktree instead: %s", req.command("--project", "<repo>"))
	}
	top, err := s.gitRoot(ctx, wt)
	if err != nil {
		return worktreePlan{}, fault.Failed("--worktree '%s' is not a git worktree (%v)", phrase.Printable(req.Worktree), err).Coded(fault.EBadWorktree).
			Hint("create the task's worktree instead: %s", req.command("--project", "<repo>")).
			Hint("or make this one with git -C '%s' init", wt)
	}
	if !sameDir(top, wt) {
		return worktreePlan{}, fault.Failed("--worktree '%s' is inside the git worktree '%s', not its root", phrase.Printable(req.Worktree), top).Coded(fault.EBadWorktree).
			Hint("pass --worktree '%s'", top).
			Hint("or create the task's own: %s", req.command("--project", harness.Quote(top)))
	}
	plan := worktreePlan{Dir: wt, Project: wt}
	if req.Project != "" {
		project, err := s.projectRoot(ctx, req.Project)
		if err != nil {
			return worktreePlan{}, err
		}
		if err := s.sameRepository(ctx, req, wt, project); err != nil {
			return worktreePlan{}, err
		}
		plan.Project = project
	}
	// A secondmate's home fills with its own records, and a shared worktree
	// holds its sharer's edits; anywhere else uncommitted changes are
	// someone else's work a fresh agent would start on top of.
	if kind == harness.KindSecondmate || req.SharedWorktree {
		return plan, nil
	}
	// Every untracked file is listed so fmctl's own wiring (a previous
	// incarnation's hooks or plugin) can be told from the user's work.
	status, err := git.Run(ctx, s.Runner, s.Tunables.GitTimeout, wt, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return worktreePlan{}, fault.Failed("--worktree '%s': its status cannot be read (%s)", wt, backends.StderrOf(err)).Coded(fault.EBadWorktree)
	}
	if status = withoutWiring(status); status != "" {
		first, _, _ := strings.Cut(status, "\n")
		return worktreePlan{}, fault.Failed("--worktree '%s' has uncommitted changes (%s): a fresh agent would start on someone else's work", wt, phrase.Printable(strings.TrimSpace(first))).Coded(fault.EBadWorktree).
			Hint("commit or stash them (git -C '%s' status)", wt).
			Hint("or relaunch the task that made them: %s", task.RelaunchCommand("<id>", kind))
	}
	return plan, nil
}

// projectRoot resolves --project to the root of its git worktree.
func (s Spawner) projectRoot(ctx context.Context, project string) (string, error) {
	abs, err := filepath.Abs(project)
	if err != nil {
		return "", fault.Failed("--project '%s': %v", phrase.Printable(project), err).Coded(fault.EBadWorktree)
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return "", fault.Failed("--project '%s' is not a directory", phrase.Printable(project)).Coded(fault.EBadWorktree)
	}
	top, err := s.gitRoot(ctx, abs)
	if err != nil {
		return "", fault.Failed("--project '%s' is not a git repository (%v)", phrase.Printable(project), err).Coded(fault.EBadWorktree).
			Hint("pass the checkout the task's work belongs to")
	}
	return top, nil
}

// sameRepository refuses a worktree of another repository than project's.
func (s Spawner) sameRepository(ctx context.Context, req Request, wt, project string) error {
	common := func(dir string) string {
		c, err := git.Run(ctx, s.Runner, s.Tunables.GitTimeout, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err != nil {
			return ""
		}
		return c
	}
	cw, cp := common(wt), common(project)
	if cw == "" || cp == "" || !sameDir(cw, cp) {
		return fault.Failed("--worktree '%s' is not a worktree of --project '%s' (its repository is '%s')", wt, project, cw).Coded(fault.EBadWorktree).
			Hint("pass the project it was made from").
			Hint("or create one: %s", req.command("--project", harness.Quote(project)))
	}
	return nil
}

// worktreesDir is where new task worktrees go: [spawn] worktrees in
// config/fm.toml (relative to the home), else a sibling of the project,
// <project>-worktrees, so the project's own checkout never holds them.
func worktreesDir(home config.Home, f config.File, project string) string {
	if d := f.Spawn.Worktrees; d != "" {
		if strings.HasPrefix(d, "~/") {
			if h, err := os.UserHomeDir(); err == nil {
				d = filepath.Join(h, d[2:])
			}
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(home.Root, d)
		}
		return filepath.Clean(d)
	}
	return filepath.Join(filepath.Dir(project), filepath.Base(project)+"-worktrees")
}

// planNewWorktree resolves where the task's worktree goes, its branch, and
// the freshest base: origin is fetched (best effort), the base defaults to
// origin/HEAD and else the project's HEAD, and a base branch that tracks an
// upstream must not be behind it.
func (s Spawner) planNewWorktree(ctx context.Context, home config.Home, f config.File, req Request) (worktreePlan, error) {
	project, err := s.projectRoot(ctx, req.Project)
	if err != nil {
		return worktreePlan{}, err
	}
	inProject := func(args ...string) (string, error) {
		return git.Run(ctx, s.Runner, s.Tunables.GitTimeout, project, args...)
	}
	plan := worktreePlan{Dir: filepath.Join(worktreesDir(home, f, project), req.ID), Project: project, Branch: req.Branch, New: true}
	if plan.Branch == "" {
		plan.Branch = "fm/" + req.ID
	}
	if _, err := inProject("check-ref-format", "--branch", plan.Branch); err != nil {
		return worktreePlan{}, fault.Usage("--branch '%s' is not a valid branch name", phrase.Printable(plan.Branch))
	}
	if _, err := os.Lstat(plan.Dir); !errors.Is(err, fs.ErrNotExist) {
		return worktreePlan{}, fault.Failed("task %s's worktree '%s' already exists", req.ID, plan.Dir).Coded(fault.EBadWorktree).
			Hint("adopt it: %s", req.command("--worktree", harness.Quote(plan.Dir), "--project", harness.Quote(project))).
			Hint("or remove it (git -C '%s' worktree remove '%s')", project, plan.Dir)
	}
	if _, err := inProject("rev-parse", "--verify", "-q", "refs/heads/"+plan.Branch); err == nil {
		return worktreePlan{}, fault.Failed("branch '%s' already exists in '%s'; name another with --branch, or delete it (git -C '%s' branch -D %s)", plan.Branch, project, project, plan.Branch).Coded(fault.EBadWorktree)
	}
	if _, err := inProject("remote", "get-url", "origin"); err == nil {
		if _, err := inProject("fetch", "--quiet", "origin"); err != nil {
			s.Print.Warn("could not fetch origin in %s (%s); the worktree is based on what is already there", project, backends.StderrOf(err))
		}
	}
	base := req.Base
	if base == "" {
		base = "HEAD"
		if _, err := inProject("rev-parse", "--verify", "-q", "origin/HEAD^{commit}"); err == nil {
			base = "origin/HEAD"
		}
	}
	if plan.BaseSHA, err = inProject("rev-parse", "--verify", "-q", base+"^{commit}"); err != nil {
		if req.Base == "" {
			return worktreePlan{}, fault.Failed("--project '%s' has no commit to start the task's worktree from; commit there first (git -C '%s' commit), or pass --base REF", project, project).Coded(fault.EBadWorktree)
		}
		return worktreePlan{}, fault.Failed("--base '%s' names no commit in '%s'", phrase.Printable(base), project).Coded(fault.EBadWorktree).
			Hint("pass a branch, tag or commit of that repository")
	}
	if up, err := inProject("rev-parse", "--verify", "-q", base+"@{upstream}^{commit}"); err == nil {
		plan.Upstream = up
	}
	return plan, nil
}

// create adds the planned worktree and proves its head descends from the
// base and the base's upstream; otherwise it removes it again and refuses.
func (s Spawner) create(ctx context.Context, plan worktreePlan) error {
	if !plan.New {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(plan.Dir), 0o755); err != nil {
		return fault.Failed("create the worktrees directory %s: %v", filepath.Dir(plan.Dir), err)
	}
	if _, err := git.Run(ctx, s.Runner, s.Tunables.GitTimeout, plan.Project, "worktree", "add", "--quiet", "-b", plan.Branch, plan.Dir, plan.BaseSHA); err != nil {
		return fault.Failed("git worktree add '%s' on branch %s failed: %s", plan.Dir, plan.Branch, backends.StderrOf(err))
	}
	for _, want := range []string{plan.BaseSHA, plan.Upstream} {
		if want == "" {
			continue
		}
		if _, err := git.Run(ctx, s.Runner, s.Tunables.GitTimeout, plan.Dir, "merge-base", "--is-ancestor", want, "HEAD"); err != nil {
			s.remove(ctx, plan)
			return fault.Failed("the new worktree's head does not descend from %s (its base or the base's upstream), so the base is behind; the worktree was removed", want).Coded(fault.EBadWorktree).
				Hint("update the base (git -C '%s' pull --ff-only), or pass --base naming the upstream", plan.Project)
		}
	}
	return nil
}

// remove undoes create for a spawn that failed before its agent ran.
func (s Spawner) remove(ctx context.Context, plan worktreePlan) {
	if !plan.New {
		return
	}
	limit := s.Tunables.GitTimeout
	_, _ = git.Run(ctx, s.Runner, limit, plan.Project, "worktree", "remove", "--force", plan.Dir)
	_, _ = git.Run(ctx, s.Runner, limit, plan.Project, "branch", "-D", plan.Branch)
}

// withoutWiring drops git status lines that name fmctl's own wiring files.
func withoutWiring(status string) string {
	ours := harness.WorktreeWiring()
	var kept []string
	for _, line := range strings.Split(strings.TrimRight(status, "\n"), "\n") {
		if len(line) > 3 && ours[line[3:]] {
			continue
		}
		if line != "" {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}
