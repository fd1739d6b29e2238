package realtmux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fm-teardown on a real server: the agent leaves by its own exit command
// (exit's postcondition), its window closes, the landed worktree and its
// branch go, and the records move into the archive; a task with unlanded
// work is refused with its agent, window and worktree untouched.
func TestTeardownEndsTheAgentAndClosesItsWindow(t *testing.T) {
	t.Parallel()
	r, project := newProjectRig(t, "d1")
	brief := filepath.Join(r.home, "data", "d1", "brief.md")
	for _, id := range []string{"d1", "d2"} {
		wantCode(t, r.fm(nil, "fm-spawn", id, "--harness", "claude", "--project", project, "--brief", brief), 0, "fm-spawn "+id)
	}
	r.startsAfter(2)

	wt2 := filepath.Join(r.dir, "app-worktrees", "d2")
	if err := os.WriteFile(filepath.Join(wt2, "notes.txt"), []byte("unlanded\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := r.fm(nil, "fm-teardown", "d2")
	wantCode(t, res, 1, "fm-teardown d2 with an untracked file")
	if !strings.Contains(res.stderr, "has not landed") || r.windowsNamed("fm-d2") != 1 || r.status("d2") != "alive" {
		t.Fatalf("a refused teardown changed something: %s; windows fm-d2=%d", res, r.windowsNamed("fm-d2"))
	}

	res = r.fm(nil, "fm-teardown", "d1")
	wantCode(t, res, 0, "fm-teardown d1")
	if !strings.HasPrefix(res.stdout, "torn-down d1 harness=claude kind=ship agent=stopped endpoint=closed worktree=removed branch=deleted archive=") {
		t.Fatalf("stdout = %q", res.stdout)
	}
	if n := r.windowsNamed("fm-d1"); n != 0 {
		t.Fatalf("%d windows named fm-d1 after teardown", n)
	}
	if !strings.Contains(readFile(r.events), "submit \"/exit\"") {
		t.Fatalf("the agent never received its exit command:\n%s", readFile(r.events))
	}
	if _, err := os.Stat(filepath.Join(r.dir, "app-worktrees", "d1")); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
	archived, _ := filepath.Glob(filepath.Join(r.home, "state", "archive", "d1-*", "d1.meta"))
	if len(archived) != 1 {
		t.Fatalf("archived records: %v", archived)
	}
	if list := r.fm(nil, "fm-control", "list"); strings.Contains(list.stdout, "d1") {
		t.Fatalf("list still shows d1:\n%s", list.stdout)
	}
}
