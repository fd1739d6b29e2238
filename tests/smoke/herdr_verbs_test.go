package smoke

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fmctl/tests/gitwt"
)

// herdrRig is the herdr the verbs run against: a real one on PATH, or the
// fake, which mirrors herdr's documented CLI and emulates the agent itself.
type herdrRig struct {
	path []string // directories put first on PATH: the herdr binary, the fake agent
	env  []string // more environment for every verb
	// session makes a herdr session for a task; an ignoreExit session's
	// agents ignore their exit command.
	session func(t *testing.T, name string, ignoreExit bool)
}

// TestHerdrVerbsSmoke runs the built verbs against a real herdr on a
// throwaway session, with tests/fakeagent as the claude its panes launch.
// It runs only when a herdr speaking protocol 14 or newer is on PATH.
func TestHerdrVerbsSmoke(t *testing.T) {
	bin, err := exec.LookPath("herdr")
	if err != nil {
		t.Skip("herdr is not on PATH; this smoke test needs a real herdr (https://herdr.dev)")
	}
	agents := t.TempDir()
	goBuild(t, filepath.Join(agents, "claude"), "./tests/fakeagent")
	pathEnv := "PATH=" + agents + string(os.PathListSeparator) + os.Getenv("PATH")
	runHerdrVerbs(t, herdrRig{
		env: []string{"FM_CONTROL_EXIT_WAIT=10"},
		session: func(t *testing.T, name string, ignoreExit bool) {
			if running, protocol := herdrStatus(t, bin, name); protocol < 14 {
				t.Skipf("herdr on PATH speaks protocol %d; the adapter needs 14 or newer", protocol)
			} else if running {
				t.Fatalf("herdr session %s already has a server; refusing to touch it", name)
			}
			env := []string{pathEnv}
			if ignoreExit {
				env = append(env, "FAKEAGENT_IGNORE_EXIT=1")
			}
			startHerdrSmokeServer(t, bin, name, env...)
		},
	})
}

// TestHerdrVerbsSmokeOnFake runs the same body against the fake herdr, so
// the smoke test's own logic is proven in every `go test`, herdr or not.
func TestHerdrVerbsSmokeOnFake(t *testing.T) {
	fakeBin := t.TempDir()
	goBuild(t, filepath.Join(fakeBin, "herdr"), "./tests/fakes/herdr/cmd/herdr")
	state := t.TempDir()
	runHerdrVerbs(t, herdrRig{
		path: []string{fakeBin},
		// HOME: the fake's agent writes its CLI's record under it, where
		// fm-send reads it back; never the user's ~/.claude.
		env: []string{"FAKE_HERDR_DIR=" + state, "FM_CONTROL_EXIT_WAIT=0.5", "HOME=" + t.TempDir()},
		session: func(t *testing.T, name string, ignoreExit bool) {
			// The fake's sessions all have a server; never-dies is its
			// agent ignoring /exit, for every session from now on.
			if ignoreExit {
				if err := os.WriteFile(filepath.Join(state, "never-dies"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		},
	})
}

// runHerdrVerbs spawns an agent, interrupts it, exits it twice (the second
// finds it already stopped), then spawns one that ignores its exit command
// and proves exit fails closed: exit 1, exit=unconfirmed, the agent alive.
func runHerdrVerbs(t *testing.T, rig herdrRig) {
	verbs := t.TempDir()
	goBuild(t, verbs+"/", "./cmd/...")
	home := t.TempDir()
	for _, d := range []string{"state", "data", "config"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	brief := filepath.Join(t.TempDir(), "brief.txt")
	if err := os.WriteFile(brief, []byte("Do the thing.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := strings.Join(append(append([]string{verbs}, rig.path...), os.Getenv("PATH")), string(os.PathListSeparator))
	env := append(append(os.Environ(), "FM_HOME="+home, "PATH="+path, "TMUX=", "HERDR_ENV=", "FM_BACKEND="), rig.env...)
	verb := func(session string, wantCode int, want string, args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(verbs, args[0]), args[1:]...)
		cmd.Env = append(env, "HERDR_SESSION="+session)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		if code != wantCode || !regexp.MustCompile(want).MatchString(out.String()) {
			t.Fatalf("%s: exit %d, want %d and output matching %q; output:\n%s", strings.Join(args, " "), code, wantCode, want, out.String())
		}
	}

	session := fmt.Sprintf("fmctl-smoke-verbs-%d", os.Getpid())
	rig.session(t, session, false)
	verb(session, 0, `(?m)^spawned v1 .*backend=herdr `, "fm-spawn", "v1", "--harness", "claude", "--worktree", gitWorktree(t), "--backend", "herdr", "--brief", brief)
	verb(session, 0, `(?m)^sent v1 .* submit=confirmed proof=record message=m[0-9T]+-[0-9a-f]{8}$`, "fm-send", "v1", "hello")
	verb(session, 0, `(?m)^interrupt-delivered v1 harness=claude backend=herdr verified=agent-alive `, "fm-control", "interrupt", "v1")
	verb(session, 0, `(?m)^stopped v1 harness=claude backend=herdr `, "fm-control", "exit", "v1")
	verb(session, 0, `(?m)^already-stopped v1 harness=claude backend=herdr `, "fm-control", "exit", "v1")

	stuck := session + "-stuck"
	rig.session(t, stuck, true)
	verb(stuck, 0, `(?m)^spawned v2 `, "fm-spawn", "v2", "--harness", "claude", "--worktree", gitWorktree(t), "--backend", "herdr", "--brief", brief)
	verb(stuck, 1, `(?m)^error: exit-delivered v2 .*exit-command=delivered agent-state=alive exit=unconfirmed; the agent did not stop within `, "fm-control", "exit", "v2")
	verb(stuck, 0, ` state=alive `, "fm-control", "status", "v2")
}

// goBuild builds a package of this module to out (a directory when it ends
// in a slash).
func goBuild(t *testing.T, out, pkg string) {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", out, pkg)
	build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// gitWorktree is a fresh git repository with one commit, as a task's
// worktree is.
func gitWorktree(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err == nil {
		err = gitwt.Init(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
