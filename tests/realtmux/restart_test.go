package realtmux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/state"
)

// A tmux restart numbers panes from %0 again, so a new task takes the pane
// ids of tasks the restart left. Each record keeps the server that issued
// its ids: those tasks read missing (never drifted into the new task's
// window), relaunch into new windows or tear down, and the new task is
// never touched. A wrong FM_TMUX_SOCKET, while the recorded server lives,
// stays unreadable and refused.
func TestATmuxRestartLeavesNoTaskStuck(t *testing.T) {
	t.Parallel()
	r := newSpawnRig(t)
	t4 := r.spawn("t4", r.worktree("t4"))
	r.spawn("t5", r.worktree("t5"))
	oldServer := r.recordValue("t4", state.KeyTmuxServer)
	if oldServer == "" {
		t.Fatalf("t4's record names no tmux server:\n%s", readFile(filepath.Join(r.home, "state", "t4.meta")))
	}

	// A wrong socket: the recorded server lives, so nothing is gone.
	res := r.fm([]string{"FM_TMUX_SOCKET=" + r.sock + "-wrong"}, "fm-control", "status", "t4", "--json")
	wantField(t, res, `"state":"unreadable"`, "status t4 on a wrong socket")
	wantCode(t, r.fm([]string{"FM_TMUX_SOCKET=" + r.sock + "-wrong"}, "fm-spawn", "t4", "--relaunch"), 1, "relaunch on a wrong socket")

	r.cmd("kill-server").Run()
	serverPID, _, _ := strings.Cut(oldServer, ":")
	waitFor(t, 10*time.Second, "the old server's process gone", func() bool {
		_, err := os.Stat("/proc/" + serverPID)
		return os.IsNotExist(err)
	}, r.panes)
	// No server at all (a reboot, before anything starts one): the recorded
	// server's process is gone, so the task is missing, not unreadable.
	wantField(t, r.fm(nil, "fm-control", "status", "t4", "--json"), `"state":"missing","server":"gone"`, "status t4 with no server")

	r.start(r.path)
	t6 := r.spawn("t6", r.worktree("t6"))
	if t6 != t4 {
		t.Fatalf("the new server gave t6 pane %s, not t4's old %s: the collision this test is about did not happen", t6, t4)
	}
	for _, id := range []string{"t4", "t5"} {
		res := r.fm(nil, "fm-control", "status", id, "--json")
		wantField(t, res, `"state":"missing","server":"gone"`, "status "+id+" after the restart")
		if !strings.Contains(res.stdout+res.stderr, "tmux restarted") {
			t.Fatalf("status %s does not say tmux restarted:\n%s", id, res)
		}
	}

	// list names every task the restart left, and only those.
	list := r.fm(nil, "fm-control", "list", "--json")
	for _, id := range []string{"t4", "t5"} {
		wantField(t, list, `"id":"`+id+`",`, "list after the restart")
	}
	if n := strings.Count(list.stdout, `"server":"gone"`); n != 2 {
		t.Fatalf("list after the restart marks %d tasks server-gone, want t4 and t5:\n%s", n, list)
	}

	// Nothing of t4's reaches t6's pane.
	before := readFile(r.bytes)
	wantCode(t, r.fm(nil, "fm-send", "t4", "hello"), 1, "fm-send t4 after the restart")
	wantCode(t, r.fm(nil, "fm-control", "interrupt", "t4"), 1, "interrupt t4 after the restart")
	if after := readFile(r.bytes); after != before {
		t.Fatalf("an agent received bytes meant for t4: %q", strings.TrimPrefix(after, before))
	}

	wantCode(t, r.fm(nil, "fm-spawn", "t4", "--relaunch"), 0, "fm-spawn t4 --relaunch")
	wantCode(t, r.fm(nil, "fm-control", "relaunch", "t5", "--note", "tmux restarted"), 0, "fm-control relaunch t5")
	for _, id := range []string{"t4", "t5", "t6"} {
		wantField(t, r.fm(nil, "fm-control", "status", id, "--json"), `"state":"alive"`, "status "+id+" after the relaunches")
		if got := r.recordValue(id, state.KeyTmuxServer); got == oldServer {
			t.Fatalf("%s's record still names the old server %s", id, oldServer)
		}
	}
	if r.recordValue("t4", state.KeyTmuxPane) == t6 {
		t.Fatalf("t4 was relaunched into t6's pane %s", t6)
	}

	// A reboot can hand the new server the old one's pid: only the start
	// time tells them apart. t6's record is made to name such a server; t6
	// then reads missing, and its teardown kills nothing of the pane that
	// now holds its id.
	pid, _, _ := strings.Cut(r.recordValue("t6", state.KeyTmuxServer), ":")
	rewriteRecord(t, filepath.Join(r.home, "state", "t6.meta"), state.KeyTmuxServer, pid+":1")
	wantField(t, r.fm(nil, "fm-control", "status", "t6", "--json"), `"state":"missing"`, "status t6 naming a server of the same pid")
	res = r.fm(nil, "fm-teardown", "t6", "--force")
	wantCode(t, res, 0, "fm-teardown t6 --force")
	if !strings.Contains(res.stdout, "endpoint=already-gone") {
		t.Fatalf("teardown of a task whose server is gone: %s", res)
	}
	if got := r.format(t6, "#{pane_id} #{pane_current_command}"); got != t6+" claude" {
		t.Fatalf("the pane holding t6's old id reads %q after the teardown, want it untouched", got)
	}
}

func wantField(t *testing.T, r result, field, what string) {
	t.Helper()
	if !strings.Contains(r.stdout, field) {
		t.Fatalf("%s: stdout lacks %s\n%s", what, field, r)
	}
}

// rewriteRecord sets key in a record file by hand, as a person or another
// machine's state would leave it.
func rewriteRecord(t *testing.T, path, key, value string) {
	t.Helper()
	lines := splitLines(readFile(path))
	for i, l := range lines {
		if k, _, _ := strings.Cut(l, "="); k == key {
			lines[i] = key + "=" + value
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
