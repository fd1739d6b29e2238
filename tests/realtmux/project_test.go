package realtmux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository with one commit at dir.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, a := range [][]string{{"init", "-q", "-b", "main", dir}, {"-C", dir, "-c", "user.name=fm", "-c", "user.email=fm@example.invalid", "commit", "-q", "--allow-empty", "-m", "start"}} {
		if out, err := exec.Command("git", a...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", a, err, out)
		}
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git -C %s %v: %v", dir, args, err)
	}
	return strings.TrimSpace(string(out))
}

// newProjectRig is a rig with a project repository, app, and a brief for
// task id in the home.
func newProjectRig(t *testing.T, id string) (*spawnRig, string) {
	t.Helper()
	r := newSpawnRig(t)
	project := filepath.Join(r.dir, "app")
	gitRepo(t, project)
	(&agent{s: r.server, id: id, wt: project}).relaunchable("Do " + id + ".\n")
	return r, project
}

// fm-spawn --project adds the task's worktree on fm/<id>, and the agent is
// launched in it: the pane's directory and the agent's cwd are the new root.
func TestSpawnProjectAddsWorktreeAndLaunchesThere(t *testing.T) {
	t.Parallel()
	r, project := newProjectRig(t, "p1")

	res := r.fm(nil, "fm-spawn", "p1", "--harness", "claude", "--project", project)
	wantCode(t, res, 0, "fm-spawn p1 --project")
	wt := filepath.Join(r.dir, "app-worktrees", "p1")
	if !strings.Contains(res.stdout, " worktree="+wt+" ") || !strings.HasSuffix(strings.TrimSpace(res.stdout), "ready=confirmed") {
		t.Fatalf("stdout = %q, want worktree=%s and ready=confirmed", res.stdout, wt)
	}
	if got := r.recordValue("p1", "worktree"); got != wt {
		t.Fatalf("worktree= %q, want %q", got, wt)
	}
	if got := r.recordValue("p1", "project"); got != project {
		t.Fatalf("project= %q, want %q", got, project)
	}
	if b := gitOut(t, wt, "rev-parse", "--abbrev-ref", "HEAD"); b != "fm/p1" {
		t.Fatalf("the new worktree is on %q, want fm/p1", b)
	}
	if got := gitOut(t, wt, "rev-parse", "HEAD"); got != gitOut(t, project, "rev-parse", "HEAD") {
		t.Fatalf("the new worktree's head %s is not the project's head", got)
	}
	if p := strings.TrimSpace(r.tmux("display-message", "-p", "-t", r.recordValue("p1", "tmux_pane_id"), "#{pane_current_path}")); p != wt {
		t.Fatalf("the task's pane is in %q, want its new worktree %q", p, wt)
	}
	r.startsAfter(1)

	// A second spawn of another task gets its own worktree, never this one.
	res = r.fm(nil, "fm-spawn", "p2", "--harness", "claude", "--project", project, "--brief", filepath.Join(r.home, "data", "p1", "brief.md"))
	wantCode(t, res, 0, "fm-spawn p2 --project")
	if got := r.recordValue("p2", "worktree"); got != filepath.Join(r.dir, "app-worktrees", "p2") {
		t.Fatalf("p2's worktree= %q", got)
	}
}

// fm-spawn run from inside tmux (TMUX and TMUX_PANE, no socket named) finds
// the server through $TMUX and puts the window in the caller's session.
func TestSpawnFromInsideTmuxGoesToCallersSession(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	r.tmux("new-session", "-d", "-s", "callers", "-n", "mine", "--", bashBin, "--norc", "--noprofile")
	pane := strings.TrimSpace(r.tmux("display-message", "-p", "-t", "callers:mine", "#{pane_id}"))
	sock := strings.TrimSpace(r.tmux("display-message", "-p", "#{socket_path}"))
	wt := r.worktree("c1")
	inside := []string{r.path, "FM_TMUX_SOCKET=", "FM_TMUX_SESSION=", "TMUX=" + sock + ",1,0", "TMUX_PANE=" + pane}
	res := r.run("", inside, "fm-spawn", "c1", "--harness", "claude", "--worktree", wt)
	wantCode(t, res, 0, "fm-spawn c1 inside tmux")
	if !strings.Contains(res.stdout, " backend=tmux window=callers:fm-c1 ") {
		t.Fatalf("stdout = %q, want backend=tmux window=callers:fm-c1", res.stdout)
	}
	if got := strings.TrimSpace(r.tmux("display-message", "-p", "-t", r.recordValue("c1", "tmux_pane_id"), "#{session_name}")); got != "callers" {
		t.Fatalf("the task's window is in session %q, want callers", got)
	}
	r.startsAfter(1)
}

// A fresh secondmate runs in a home of its own: the agent process has
// FM_HOME set to it (not the parent's) and the home is provisioned.
func TestSpawnSecondmateRunsInItsOwnHome(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	sm := r.worktree("sm1")
	res := r.run("", []string{"FM_TMUX_SESSION=" + session, r.path, "FM_STATE_OVERRIDE=" + filepath.Join(r.home, "state")}, "fm-spawn", "sm1", "--secondmate", "--harness", "claude", "--worktree", sm)
	wantCode(t, res, 0, "fm-spawn sm1 --secondmate")
	r.startsAfter(1)
	var pid string
	for _, e := range splitLines(readFile(r.events)) {
		if rest, ok := strings.CutPrefix(e, "start claude pid="); ok {
			pid = strings.Fields(rest)[0]
		}
	}
	env := readFile(filepath.Join("/proc", pid, "environ"))
	vars := strings.Split(env, "\x00")
	has := func(kv string) bool {
		for _, v := range vars {
			if v == kv {
				return true
			}
		}
		return false
	}
	if !has("FM_HOME=" + sm) {
		t.Fatalf("the secondmate's agent (pid %s) does not run with FM_HOME=%s; its environment: %q", pid, sm, vars)
	}
	for _, d := range []string{"state", "data", "config", "data/charter.md"} {
		if _, err := os.Stat(filepath.Join(sm, d)); err != nil {
			t.Errorf("the secondmate's home lacks %s: %v", d, err)
		}
	}
	if m := strings.TrimSpace(readFile(filepath.Join(sm, ".fm-secondmate-home"))); m != "sm1" {
		t.Errorf(".fm-secondmate-home = %q, want sm1", m)
	}
}
