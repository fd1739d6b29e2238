package realtmux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/tests/privtmux"
)

// failFast is how soon a launch whose shell came back must be reported: a
// fraction of the 30 s readiness wait (FM_SPAWN_WAIT's default) it used to
// sit out before printing ready=starting.
const failFast = 10 * time.Second

// A launch line whose binary is not on the pane's PATH fails at once: the
// shell says "command not found", fm-spawn exits 1 with launch-failed,
// quoting it and naming the config/fm.toml line that pins the binary, and
// leaves no record; fm-spawn --relaunch
// leaves the new record, which reads dead, not alive.
func TestMissingLaunchBinaryFailsFast(t *testing.T) {
	t.Parallel()
	// The server's panes and fm-spawn both have a PATH without claude.
	noClaude := "PATH=" + filepath.Dir(tmuxBin) + ":/usr/bin:/bin"
	s := newServer(t, noClaude)
	wt := filepath.Join(s.dir, "wt-m1")
	(&agent{s: s, id: "m1", wt: wt}).relaunchable("Do m1.\n")

	env := []string{"FM_TMUX_SESSION=" + session, noClaude, "FM_SPAWN_WAIT=30s"}
	res := s.run("", env, "fm-spawn", "m1", "--harness", "claude", "--worktree", wt, "--json")
	wantCode(t, res, 1, "fm-spawn m1 with claude missing")
	if res.elapsed > failFast {
		t.Fatalf("fm-spawn took %v to see the launch fail, want under %v:\n%s", res.elapsed, failFast, res)
	}
	for _, want := range []string{`"code":"launch-failed"`, `claude: command not found`, `under [harness.claude], write binary = \"/`} {
		if !strings.Contains(res.stderr, want) {
			t.Fatalf("stderr lacks %s:\n%s", want, res)
		}
	}
	if _, err := os.Stat(filepath.Join(s.home, "state", "m1.meta")); err == nil {
		t.Fatalf("a failed fresh launch left a record:\n%s", readFile(filepath.Join(s.home, "state", "m1.meta")))
	}

	// A relaunch into the same worktree's agent-free pane: the record is
	// published, and what it says is that no agent runs.
	s.tmux("new-window", "-d", "-t", session+":", "-n", "fm-m1", "-c", wt)
	// Until the new pane's child has run its shell it is still tmux's own
	// fork ("tmux: server"), which fmctl rightly will not launch into.
	pane := session + ":fm-m1"
	waitFor(t, 10*time.Second, "the new pane's shell", func() bool {
		cmd := s.format(pane, "#{pane_current_command}")
		return cmd != "" && !strings.Contains(cmd, "tmux")
	}, func() string { return s.panes() })
	rec := "window=" + session + ":fm-m1\nendpoint_task_id=m1\nworktree=" + wt + "\nproject=" + wt + "\nharness=codex\nkind=ship\nmodel=default\neffort=default\n"
	if err := os.WriteFile(filepath.Join(s.home, "state", "m1.meta"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	res = s.run("", env, "fm-spawn", "m1", "--relaunch", "--harness", "claude")
	wantCode(t, res, 1, "fm-spawn m1 --relaunch with claude missing")
	if res.elapsed > failFast || !strings.Contains(res.stderr, "its shell could not run claude") || !strings.Contains(res.stderr, "\nhint: ") {
		t.Fatalf("relaunch: want launch-failed with a hint in under %v:\n%s", failFast, res)
	}
	st := s.run("", env, "fm-control", "status", "m1")
	wantCode(t, st, 0, "fm-control status m1")
	if !strings.Contains(st.stdout, " state=dead ") {
		t.Fatalf("after the failed relaunch the task reads:\n%s", st)
	}
}

// A tmux server fm-spawn starts itself hands its session the caller's PATH
// (new-session -e), not whatever PATH the server's own start had. (A
// login profile may still reset it in the pane, as Debian's /etc/profile
// does: the pin below keeps the launch independent of that.)
func TestSpawnStartsItsServerWithTheCallersPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// s carries the home, the scratch dir and the socket; its own server
	// is killed at once, so fm-spawn starts the one the test inspects (on
	// the new socket, which newServer's cleanup reads when it runs).
	s := newServer(t)
	privtmux.Kill(s.cmd, s.sock)
	s.sock = privateSocket(t)
	path := fakeClaudePath(t, dir)
	pin := "[harness.claude]\nbinary = \"" + filepath.Join(dir, "bin", "claude") + "\"\n"
	if err := os.WriteFile(filepath.Join(s.home, "config", "fm.toml"), []byte(pin), 0o644); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(s.dir, "wt-p1")
	(&agent{s: s, id: "p1", wt: wt}).relaunchable("Do p1.\n")

	// A home of its own: no user tmux.conf or shell profile decides.
	env := []string{"FM_TMUX_SESSION=" + session, path, "HOME=" + dir, "SHELL=" + bashBin}
	res := s.run("", env, "fm-spawn", "p1", "--harness", "claude", "--worktree", wt)
	wantCode(t, res, 0, "fm-spawn p1 on a server it starts")
	out, err := exec.Command(tmuxBin, "-L", s.sock, "show-environment", "-t", session, "PATH").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != path {
		t.Fatalf("the session's PATH is %q (%v), want the caller's %q", out, err, path)
	}
}
