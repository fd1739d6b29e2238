package remotessh

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fm-spawn h1/s1 --project <a path there> --brief <a file here> spawns the
// task on h1, its brief copied from this machine; a relaunch with a
// --note-file from here carries the note there.
func TestSpawnAndRelaunchARemoteTask(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	writeFile(t, filepath.Join(h.Home, "config", "fm.toml"), "[harness.claude]\nbinary = \""+filepath.Join(binDir, "claude")+"\"\n")
	project := filepath.Join(h.Dir, "app")
	for _, a := range [][]string{{"init", "-q", "-b", "main", project}, {"-C", project, "-c", "user.name=fm", "-c", "user.email=fm@example.invalid", "commit", "-q", "--allow-empty", "-m", "start"}} {
		if out, err := exec.Command("git", a...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", a, err, out)
		}
	}
	brief := filepath.Join(f.Dir, "brief.md")
	writeFile(t, brief, "Make the tests pass on h1.\n")
	note := filepath.Join(f.Dir, "note.md")
	writeFile(t, note, "tests pass; next: the docs\n")

	r := f.run(90*time.Second, nil, "fm-spawn", "h1/s1", "--harness", "claude", "--project", project, "--brief", brief)
	wantCode(t, r, 0, "fm-spawn h1/s1")
	if !strings.HasPrefix(r.stdout, "spawned h1/s1 harness=claude") || !strings.Contains(r.stdout, "worktree="+project+"-worktrees/s1") {
		t.Fatalf("fm-spawn said %s", r)
	}
	if got := readFile(filepath.Join(h.Home, "data", "s1", "brief.md")); got != "Make the tests pass on h1.\n" {
		t.Fatalf("the host's brief is %q", got)
	}
	// a field list and --jq are applied here, to the host's answer
	r = f.run(30*time.Second, nil, "fm-control", "status", "h1/s1", "--jq", ".state")
	wantCode(t, r, 0, "status h1/s1 --jq .state")
	if r.stdout != "alive\n" {
		t.Fatalf("status --jq .state said %s", r)
	}

	r = f.run(120*time.Second, nil, "fm-control", "relaunch", "h1/s1", "--note-file", note)
	wantCode(t, r, 0, "relaunch h1/s1 --note-file")
	if !strings.HasPrefix(r.stdout, "relaunched h1/s1 ") {
		t.Fatalf("relaunch said %s", r)
	}
	if got := readFile(filepath.Join(h.Home, "data", "s1", "brief.md")); !strings.Contains(got, "tests pass; next: the docs") {
		t.Fatalf("the note did not reach the host's brief: %q", got)
	}
	// the task's branch holds nothing the project's main lacks: landed, so
	// the host's fm-teardown finishes it there
	r = f.run(90*time.Second, nil, "fm-teardown", "h1/s1")
	wantCode(t, r, 0, "fm-teardown h1/s1")
	if !strings.HasPrefix(r.stdout, "torn-down h1/s1 ") || !strings.Contains(r.stdout, "worktree=removed") {
		t.Fatalf("fm-teardown said %s", r)
	}
	if archived, _ := filepath.Glob(filepath.Join(h.Home, "state", "archive", "s1-*", "s1.meta")); len(archived) != 1 {
		t.Fatalf("the host archived %v, want one s1.meta", archived)
	}
	wantCode(t, f.run(30*time.Second, nil, "fm-control", "status", "h1/s1"), 1, "status h1/s1 after the teardown")
}
