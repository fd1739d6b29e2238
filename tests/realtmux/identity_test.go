package realtmux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fmctl/backends/tmux"
	"fmctl/state"
)

// spawnRig is a private server whose panes (and fm-spawn) find the fake
// claude on PATH, with one events log every agent started there writes to.
type spawnRig struct {
	*server
	path, events, bytes string
}

// fakeClaudePath puts the fake claude alone in dir/bin and returns a PATH=
// setting that finds it. tmux 3.3a gives a window made by an unattached
// client (fm-spawn's new-window) that client's PATH, not the server's, so
// fm-spawn needs it as well as the server.
func fakeClaudePath(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(filepath.Join(binDir, "claude"), filepath.Join(bin, "claude")); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + bin + ":" + filepath.Dir(tmuxBin) + ":/usr/bin:/bin"
}

func newSpawnRig(t *testing.T) *spawnRig {
	t.Helper()
	requireTmux(t)
	dir := t.TempDir()
	r := &spawnRig{path: fakeClaudePath(t, dir), events: filepath.Join(dir, "events.log"), bytes: filepath.Join(dir, "bytes.log")}
	r.server = newServer(t, r.path)
	r.tmux("set-environment", "-g", "FAKEAGENT_EVENTS", r.events)
	r.tmux("set-environment", "-g", "FAKEAGENT_LOG", r.bytes)
	return r
}

// worktree makes a git worktree with a brief for task id.
func (r *spawnRig) worktree(id string) string {
	wt := filepath.Join(r.dir, "wt-"+id)
	(&agent{s: r.server, id: id, wt: wt}).relaunchable("Do " + id + ".\n")
	return wt
}

func (r *spawnRig) fm(extraEnv []string, bin string, args ...string) result {
	r.t.Helper()
	return r.run("", append([]string{"FM_TMUX_SESSION=" + session, r.path}, extraEnv...), bin, args...)
}

// spawn launches a fake claude for id through fm-spawn and returns its pane id.
func (r *spawnRig) spawn(id, wt string) string {
	r.t.Helper()
	res := r.fm(nil, "fm-spawn", id, "--harness", "claude", "--worktree", wt)
	wantCode(r.t, res, 0, "fm-spawn "+id)
	pane := r.recordValue(id, state.KeyTmuxPane)
	if !strings.HasPrefix(pane, "%") {
		r.t.Fatalf("state/%s.meta has no tmux_pane_id:\n%s", id, readFile(filepath.Join(r.home, "state", id+".meta")))
	}
	return pane
}

func (r *spawnRig) recordValue(id, key string) string {
	for _, l := range splitLines(readFile(filepath.Join(r.home, "state", id+".meta"))) {
		if k, v, _ := strings.Cut(l, "="); k == key {
			return v
		}
	}
	return ""
}

// startsAfter waits until at least want agents have written their start
// event (ready=confirmed means the process is in the foreground; the fake
// logs its start a moment later) and returns how many have.
func (r *spawnRig) startsAfter(want int) int {
	r.t.Helper()
	waitFor(r.t, 10*time.Second, "agent start events", func() bool { return r.starts() >= want }, r.panes)
	return r.starts()
}

// starts counts the agents ever started on this server.
func (r *spawnRig) starts() int {
	n := 0
	for _, e := range splitLines(readFile(r.events)) {
		if strings.HasPrefix(e, "start claude ") {
			n++
		}
	}
	return n
}

func (r *spawnRig) status(id string, env ...string) string {
	r.t.Helper()
	res := r.fm(env, "fm-control", "status", id)
	wantCode(r.t, res, 0, "fm-control status "+id)
	for _, f := range strings.Fields(res.stdout) {
		if v, ok := strings.CutPrefix(f, "state="); ok {
			return v
		}
	}
	r.t.Fatalf("status printed no state: %s", res)
	return ""
}

func (r *spawnRig) windowsNamed(name string) int {
	n := 0
	for _, l := range splitLines(r.tmux("list-windows", "-a", "-F", "#{window_name}")) {
		if l == name {
			n++
		}
	}
	return n
}

// A renamed window reads drifted; relaunch refuses and starts no second
// agent; rebind repairs the record, and then verbs reach the agent again.
func TestRenamedWindowDriftsRelaunchRefusesRebindRepairs(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	wt := r.worktree("t1")
	pane := r.spawn("t1", wt)
	r.tmux("rename-window", "-t", pane, "renamed")
	if got := r.status("t1"); got != "drifted" {
		t.Fatalf("status after rename-window: state=%s, want drifted", got)
	}
	meta := readFile(filepath.Join(r.home, "state", "t1.meta"))
	res := r.fm([]string{"FM_CONTROL_EXIT_WAIT=5"}, "fm-control", "relaunch", "t1", "--note", "go on")
	wantCode(t, res, 1, "relaunch into a drifted endpoint")
	if !strings.Contains(res.stderr, "fm-control rebind t1") {
		t.Fatalf("relaunch refusal does not name rebind: %s", res)
	}
	if n := r.startsAfter(1); n != 1 || r.windowsNamed("fm-t1") != 0 {
		t.Fatalf("relaunch started %d agents / made %d fm-t1 windows, want 1 and 0:\n%s", n, r.windowsNamed("fm-t1"), r.panes())
	}
	if got := readFile(r.bytes); got != "" {
		t.Fatalf("the drifted agent read %q, want nothing", got)
	}
	if got := readFile(filepath.Join(r.home, "state", "t1.meta")); got != meta {
		t.Fatalf("record changed by a refused relaunch:\n%s\nwas\n%s", got, meta)
	}

	res = r.fm(nil, "fm-control", "rebind", "t1")
	wantCode(t, res, 0, "rebind t1")
	if !strings.HasPrefix(res.stdout, "rebound t1 backend=tmux endpoint=fmses:fm-t1 was=fmses:renamed pane="+pane+" state=alive ") {
		t.Fatalf("rebind stdout %q", res.stdout)
	}
	if got := r.status("t1"); got != "alive" {
		t.Fatalf("status after rebind: state=%s, want alive", got)
	}
	res = r.fm(nil, "fm-send", "t1", "hello")
	wantCode(t, res, 0, "fm-send after rebind")
	waitFor(t, 10*time.Second, "the agent reads the message", func() bool { return readFile(r.bytes) == "hello\r" }, r.panes)
}

// move-window to another session drifts the endpoint; rebind follows it.
func TestMovedWindowDriftsAndRebindFollowsIt(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	pane := r.spawn("t1", r.worktree("t1"))
	r.tmux("new-session", "-d", "-s", "other")
	r.tmux("move-window", "-s", pane, "-t", "=other:")
	if got := r.status("t1"); got != "drifted" {
		t.Fatalf("status after move-window: state=%s, want drifted", got)
	}
	wantCode(t, r.fm(nil, "fm-control", "rebind", "t1"), 0, "rebind t1")
	if got := r.recordValue("t1", "window"); got != "other:fm-t1" {
		t.Fatalf("window=%s after rebind, want other:fm-t1", got)
	}
	if got := r.status("t1"); got != "alive" {
		t.Fatalf("status after rebind: state=%s, want alive", got)
	}
}

// A wrong FM_TMUX_SOCKET cannot see the agent: unreadable, never missing,
// and relaunch refuses rather than starting a second agent elsewhere.
func TestWrongSocketReadsUnreadable(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	r.spawn("t1", r.worktree("t1"))
	wrong := "FM_TMUX_SOCKET=" + r.sock + "-wrong"
	if got := r.status("t1", wrong); got != "unreadable" {
		t.Fatalf("status on a wrong socket: state=%s, want unreadable", got)
	}
	res := r.fm([]string{wrong}, "fm-control", "relaunch", "t1", "--note", "go on")
	wantCode(t, res, 1, "relaunch on a wrong socket")
	if n := r.startsAfter(1); n != 1 {
		t.Fatalf("%d agents started, want 1", n)
	}
}

// A record written before the id keys existed resolves by label, so a
// renamed window reads missing; relaunch still refuses, because an agent
// runs in the task's worktree, and starts nothing.
func TestOldRecordRenamedWindowRelaunchStartsNoSecondAgent(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude", oldRecord())
	a.relaunchable("Do it.\n")
	s.tmux("rename-window", "-t", a.pane, "renamed")
	res := s.run("", []string{"FM_CONTROL_EXIT_WAIT=5"}, "fm-control", "relaunch", "t1", "--note", "go on")
	wantCode(t, res, 1, "relaunch of an old record whose window was renamed")
	if !strings.Contains(res.stderr, "an agent already runs in task t1's worktree") || !strings.Contains(res.stderr, a.pane+" in fmses:renamed") {
		t.Fatalf("refusal does not name the running pane: %s", res)
	}
	if len(a.eventsWithPrefix("start ")) != 1 || a.bytes() != "" {
		t.Fatalf("the running agent was touched or a second one started:\n%s", a.state())
	}
	if out, _ := s.cmd("list-windows", "-a", "-F", "#{window_name}").Output(); strings.Contains(string(out), "fm-t1") {
		t.Fatalf("relaunch created a window fm-t1:\n%s", s.panes())
	}
}

// Text left on the shell line is cleared before the launch line is typed.
func TestLeftoverShellTextIsNotGluedToTheLaunchLine(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	pane := r.spawn("t1", r.worktree("t1"))
	wantCode(t, r.fm([]string{"FM_CONTROL_EXIT_WAIT=10"}, "fm-control", "exit", "t1"), 0, "exit t1")
	r.tmux("send-keys", "-t", pane, "-l", "echo GLUED")
	r.tmux("send-keys", "-t", pane, "Left", "Left")
	waitFor(t, 5*time.Second, "the leftover on the shell line", func() bool { return strings.Contains(r.capture(pane), "echo GLUED") }, r.panes)
	res := r.fm(nil, "fm-spawn", "t1", "--relaunch")
	wantCode(t, res, 0, "fm-spawn t1 --relaunch over leftover text")
	if n := r.startsAfter(2); n != 2 {
		t.Fatalf("%d agents started, want 2 (the first and its replacement)", n)
	}
	if cmd := r.format(pane, "#{pane_current_command}"); cmd != "claude" {
		t.Fatalf("pane runs %q after the relaunch, want claude\n%s", cmd, r.capture(pane))
	}
}

// ShellLineClear empties the input line, the cursor mid-line, in every
// shell installed here; a shell that is not installed is skipped.
func TestShellLineClear(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shells := map[string][]string{
		"bash": {"--norc", "--noprofile"}, "zsh": {"-f"}, "fish": {"--no-config"}, "dash": {"-i"},
	}
	for name, args := range shells {
		t.Run(name, func(t *testing.T) {
			bin, err := exec.LookPath(name)
			if err != nil {
				t.Skipf("%s is not installed; its line clear is unverified here", name)
			}
			pane := strings.TrimSpace(s.tmux(append([]string{"new-window", "-d", "-P", "-F", "#{pane_id}", "-n", "sh-" + name, "--", bin}, args...)...))
			screen := func() string { return s.capture(pane) }
			waitFor(t, 5*time.Second, name+"'s prompt", func() bool { return strings.TrimSpace(s.capture(pane)) != "" }, screen)
			s.tmux("send-keys", "-t", pane, "-l", "echo LEFTOVER")
			s.tmux("send-keys", "-t", pane, "Left", "Left", "Left")
			waitFor(t, 5*time.Second, name+" echoes the leftover", func() bool { return strings.Contains(s.capture(pane), "LEFTOVER") }, screen)
			s.tmux(append([]string{"send-keys", "-t", pane}, tmux.ShellLineClear...)...)
			// The command's effect, not the screen, is the proof: any
			// leftover would change what lands in out (or where).
			out := filepath.Join(s.dir, "out-"+name)
			s.tmux("send-keys", "-t", pane, "-l", "echo CLEAN > "+out)
			s.tmux("send-keys", "-t", pane, "Enter")
			waitFor(t, 5*time.Second, name+" runs exactly the typed line", func() bool { return readFile(out) == "CLEAN\n" }, screen)
		})
	}
}

// A spawn killed after creating its window leaves an intent; recover
// removes the agent-free orphan, and the id can be spawned again.
func TestKilledSpawnOrphanIsRecovered(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	wt := r.worktree("t1")
	res := r.fm([]string{"FM_TEST_CRASH=before-rename:t1.meta"}, "fm-spawn", "t1", "--harness", "claude", "--worktree", wt)
	if res.code == 0 {
		t.Fatalf("the crash seam did not kill fm-spawn: %s", res)
	}
	if r.windowsNamed("fm-t1") != 1 {
		t.Fatalf("no orphan window fm-t1 after the kill:\n%s", r.panes())
	}
	res = r.fm(nil, "fm-control", "recover", "t1")
	wantCode(t, res, 0, "recover t1")
	if res.stdout != "recovered t1 spawn=removed window=fmses:fm-t1\n" {
		t.Fatalf("recover stdout %q", res.stdout)
	}
	if r.windowsNamed("fm-t1") != 0 {
		t.Fatalf("the orphan window survived recover:\n%s", r.panes())
	}
	r.spawn("t1", wt)
}

// Five spawns of different ids into a session that does not exist yet all
// succeed: the losers of the session-creation race use the winner's session.
func TestConcurrentSpawnsIntoAMissingSession(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	var wg sync.WaitGroup
	results := make([]result, 5)
	for i := range results {
		id := "c" + string(rune('1'+i))
		wt := r.worktree(id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.run("", []string{"FM_TMUX_SESSION=fresh", r.path}, "fm-spawn", id, "--harness", "claude", "--worktree", wt)
		}()
	}
	wg.Wait()
	for i, res := range results {
		wantCode(t, res, 0, "concurrent fm-spawn c"+string(rune('1'+i)))
	}
	if got := len(splitLines(r.tmux("list-windows", "-t", "=fresh", "-F", "#{window_name}"))); got != 5 {
		t.Fatalf("session fresh has %d windows, want 5:\n%s", got, r.panes())
	}
}

// twoTasks makes tasks <p>a<round> and <p>b<round>, each with its brief,
// and returns a's worktree, where both are to be launched.
func (r *spawnRig) twoTasks(p string, round int) (a, b, wt string) {
	a, b = fmt.Sprintf("%sa%d", p, round), fmt.Sprintf("%sb%d", p, round)
	wt = r.worktree(a)
	r.worktree(b)
	return a, b, wt
}

// spawnsAtOnce runs one fm-spawn per argument list, all at once.
func (r *spawnRig) spawnsAtOnce(argLists ...[]string) []result {
	results := make([]result, len(argLists))
	var wg sync.WaitGroup
	for i, args := range argLists {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.fm(nil, "fm-spawn", args...)
		}()
	}
	wg.Wait()
	return results
}

// Two fm-spawn of different tasks into one worktree at once start one
// agent: the second waits on the first's worktree lock, then sees its agent
// and refuses. Without the lock both passed the guards (5 of 5 rounds).
func TestConcurrentSpawnsIntoOneWorktreeStartOneAgent(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	for round := range 3 {
		a, b, wt := r.twoTasks("w", round)
		results := r.spawnsAtOnce([]string{a, "--harness", "claude", "--worktree", wt}, []string{b, "--harness", "claude", "--worktree", wt})
		ok, refused := 0, 0
		for _, res := range results {
			switch {
			case res.code == 0:
				ok++
			case res.code == 1 && strings.Contains(res.stderr, "is already used by live task"):
				refused++
			}
		}
		if ok != 1 || refused != 1 {
			t.Fatalf("round %d: %d launched and %d refused, want 1 and 1:\n%s\n%s\n%s", round, ok, refused, results[0], results[1], r.panes())
		}
		if got := r.startsAfter(round + 1); got != round+1 {
			t.Fatalf("round %d: %d agents started in all, want %d:\n%s", round, got, round+1, r.panes())
		}
	}
}

// A relaunch into an agent-free worktree and a fresh fm-spawn of another
// task into it at once start one agent: both guard and launch under the
// worktree's lock (without it in the relaunch, both launched).
func TestRelaunchAndSpawnIntoOneWorktreeStartOneAgent(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	for round := range 3 {
		a, b, wt := r.twoTasks("r", round)
		r.spawn(a, wt)
		wantCode(t, r.fm([]string{"FM_CONTROL_EXIT_WAIT=10"}, "fm-control", "exit", a), 0, "exit "+a)
		before := r.startsAfter(2*round + 1)
		results := r.spawnsAtOnce([]string{a, "--relaunch"}, []string{b, "--harness", "claude", "--worktree", wt})
		if (results[0].code == 0) == (results[1].code == 0) {
			t.Fatalf("round %d: want exactly one launch:\n%s\n%s\n%s", round, results[0], results[1], r.panes())
		}
		if got := r.startsAfter(before + 1); got != before+1 {
			t.Fatalf("round %d: %d agents started, want 1:\n%s", round, got-before, r.panes())
		}
		// the round's agent goes, so the next round starts from none
		winner := a
		if results[1].code == 0 {
			winner = b
		}
		wantCode(t, r.fm([]string{"FM_CONTROL_EXIT_WAIT=10"}, "fm-control", "exit", winner), 0, "exit "+winner)
	}
}

// fm-spawn's launch-line check holds in every installed pane shell, in a
// pane narrow enough that the launch line spans several rows (zsh breaks
// the rows itself, so tmux does not join them).
func TestSpawnChecksTheLaunchLineInEveryShell(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	r.tmux("new-session", "-d", "-s", "narrow", "-x", "60", "-y", "20")
	shells := map[string]string{"bash": "--norc --noprofile", "zsh": "-f", "fish": "--no-config", "dash": "-i"}
	for name, args := range shells {
		t.Run(name, func(t *testing.T) {
			bin, err := exec.LookPath(name)
			if err != nil {
				t.Skipf("%s is not installed; launches from it are unverified here", name)
			}
			// Each spawn's window runs this shell; the subtests run one
			// after another, so the server-wide default is safe to switch
			// between them.
			r.tmux("set-option", "-g", "default-command", "exec "+bin+" "+args)
			id := "sh-" + name
			res := r.run("", []string{"FM_TMUX_SESSION=narrow", r.path}, "fm-spawn", id, "--harness", "claude", "--worktree", r.worktree(id))
			wantCode(t, res, 0, "fm-spawn from "+name)
			if !strings.HasSuffix(strings.TrimSpace(res.stdout), "ready=confirmed") {
				t.Fatalf("fm-spawn from %s: %s", name, res)
			}
		})
	}
}
