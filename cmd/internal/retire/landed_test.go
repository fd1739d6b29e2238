package retire

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// realGit runs the git on PATH with an identity and no user configuration.
func realGit(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=fm", "GIT_AUTHOR_EMAIL=fm@example.com", "GIT_COMMITTER_NAME=fm", "GIT_COMMITTER_EMAIL=fm@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return "", errors.New(strings.TrimSpace(string(ee.Stderr)))
	}
	return strings.TrimSpace(string(out)), err
}

type repo struct {
	t       *testing.T
	project string // main checkout on main, one commit
	wt      string // linked worktree on fm/t1
}

func (r repo) git(dir string, args ...string) string {
	r.t.Helper()
	out, err := realGit(context.Background(), dir, args...)
	if err != nil {
		r.t.Fatalf("git %v in %s: %v", args, dir, err)
	}
	return out
}

func (r repo) commit(dir, file string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(file+"\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.git(dir, "add", file)
	r.git(dir, "commit", "-q", "-m", "add "+file)
}

// newRepo is a project with a task worktree, and (withRemote) an origin it
// was cloned from.
func newRepo(t *testing.T, withRemote bool) repo {
	base := t.TempDir()
	r := repo{t: t, project: filepath.Join(base, "project"), wt: filepath.Join(base, "wt")}
	if withRemote {
		origin := filepath.Join(base, "origin.git")
		r.git(base, "init", "-q", "--bare", "-b", "main", origin)
		r.git(base, "clone", "-q", origin, r.project)
		r.git(r.project, "commit", "-q", "--allow-empty", "-m", "start")
		r.git(r.project, "push", "-q", "origin", "main")
	} else {
		r.git(base, "init", "-q", "-b", "main", r.project)
		r.git(r.project, "commit", "-q", "--allow-empty", "-m", "start")
	}
	r.git(r.project, "worktree", "add", "-q", "-b", "fm/t1", r.wt)
	return r
}

func (r repo) check() Work {
	r.t.Helper()
	w, err := CheckLanded(context.Background(), realGit, r.wt, r.project, nil)
	if err != nil {
		r.t.Fatalf("CheckLanded: %v", err)
	}
	return w
}

func TestRemoteTrackingDecides(t *testing.T) {
	r := newRepo(t, true)
	if w := r.check(); !w.Landed() || w.Against != "remote-tracking branches" || w.Branch != "fm/t1" || w.Main {
		t.Fatalf("a branch with no commits of its own: %+v, want landed against remote-tracking branches", w)
	}
	r.commit(r.wt, "a.txt")
	r.commit(r.wt, "b.txt")
	w := r.check()
	if w.Landed() || w.Unlanded != 2 || len(w.Commits) != 2 || !strings.HasSuffix(w.Commits[0], "add b.txt") {
		t.Fatalf("two unpushed commits: %+v", w)
	}
	r.git(r.wt, "push", "-q", "origin", "fm/t1")
	if w := r.check(); !w.Landed() || w.Unlanded != 0 {
		t.Fatalf("after push: %+v, want landed", w)
	}
}

func TestWithoutRemoteTheDefaultBranchDecides(t *testing.T) {
	r := newRepo(t, false)
	r.commit(r.wt, "a.txt")
	w := r.check()
	if w.Landed() || w.Unlanded != 1 || w.Against != "refs/heads/main" {
		t.Fatalf("an unmerged commit: %+v", w)
	}
	r.git(r.project, "merge", "-q", "--ff-only", "fm/t1")
	if w := r.check(); !w.Landed() {
		t.Fatalf("after merging into main: %+v, want landed", w)
	}
}

func TestUncommittedAndUntrackedAreNeverLanded(t *testing.T) {
	r := newRepo(t, true)
	if err := os.WriteFile(filepath.Join(r.wt, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := r.check()
	if w.Landed() || len(w.Changes) != 1 || w.Changes[0] != "?? notes.txt" {
		t.Fatalf("an untracked file: %+v", w)
	}
	ignored, err := CheckLanded(context.Background(), realGit, r.wt, r.project, func(p string) bool { return p == "notes.txt" })
	if err != nil || !ignored.Landed() {
		t.Fatalf("the caller's ignore drops fmctl's own files: %+v %v", ignored, err)
	}
	r.commit(r.wt, "a.txt")
	r.git(r.wt, "push", "-q", "origin", "fm/t1")
	if err := os.WriteFile(filepath.Join(r.wt, "a.txt"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The modified file is git's first status line: trimming the
	// output must not shift its path.
	if w := r.check(); w.Landed() || len(w.Changes) != 2 || w.Changes[0] != " M a.txt" {
		t.Fatalf("a modified tracked file beside the untracked one: %q", w.Changes)
	}
}

func TestDetachedHeadIsNeverLanded(t *testing.T) {
	r := newRepo(t, true)
	r.git(r.wt, "checkout", "-q", "--detach")
	w := r.check()
	if w.Landed() || w.Branch != "" || w.Head == "" {
		t.Fatalf("a detached head: %+v", w)
	}
}

func TestBranchCheckedOutElsewhere(t *testing.T) {
	r := newRepo(t, true)
	other := filepath.Join(filepath.Dir(r.wt), "other")
	r.git(r.project, "worktree", "add", "-q", "--force", other, "fm/t1")
	if w := r.check(); !sameDir(w.Elsewhere, other) {
		t.Fatalf("fm/t1 is also checked out at %s: %+v", other, w)
	}
}

func TestMainCheckoutIsMarked(t *testing.T) {
	r := newRepo(t, false)
	w, err := CheckLanded(context.Background(), realGit, r.project, r.project, nil)
	if err != nil || !w.Main || !w.Landed() {
		t.Fatalf("the project's own checkout on its default branch: %+v %v", w, err)
	}
}

func TestUnjudgeable(t *testing.T) {
	r := newRepo(t, true)
	stranger := t.TempDir()
	if _, err := realGit(context.Background(), stranger, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, wt, project string
		want              error
	}{
		{"worktree gone", filepath.Join(r.wt, "nope"), r.project, ErrNoWorktree},
		{"project gone", r.wt, filepath.Join(r.project, "nope"), ErrNoProject},
		{"another repository's worktree", stranger, r.project, ErrForeign},
	}
	for _, c := range cases {
		if _, err := CheckLanded(context.Background(), realGit, c.wt, c.project, nil); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// A git that fails is reported as unreadable, never as landed.
func TestFailingGitIsNotLanded(t *testing.T) {
	r := newRepo(t, true)
	failStatus := func(ctx context.Context, dir string, args ...string) (string, error) {
		if args[0] == "status" {
			return "", errors.New("fatal: index file corrupt")
		}
		return realGit(ctx, dir, args...)
	}
	if _, err := CheckLanded(context.Background(), failStatus, r.wt, r.project, nil); !errors.Is(err, ErrGitUnreadable) {
		t.Fatalf("a failing git status: %v, want ErrGitUnreadable", err)
	}
}
