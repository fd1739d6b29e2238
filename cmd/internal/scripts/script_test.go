// Package scripts runs the testscript suites in its testdata directory against the
// four binaries and the fake multiplexers. It lives under cmd/internal because
// only code there may import the CLI packages it runs in-process.
package scripts

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"fmctl/cmd/internal/control"
	"fmctl/cmd/internal/send"
	"fmctl/cmd/internal/spawn"
	"fmctl/cmd/internal/teardown"
	"fmctl/state"
	herdrfake "fmctl/tests/fakes/herdr"
	tmuxfake "fmctl/tests/fakes/tmux"
	zellijfake "fmctl/tests/fakes/zellij"
	"fmctl/tests/gitwt"
	"fmctl/tests/hometree"
)

// The binaries under test and the fake multiplexers run as commands inside
// each script, from this test binary, exactly as they would from PATH.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fm-send":     exitWith(recordJSON(func() int { return send.Main(os.Args) })),
		"fm-control":  exitWith(recordJSON(func() int { return control.Main(os.Args) })),
		"fm-spawn":    exitWith(recordJSON(func() int { return spawn.Main(os.Args) })),
		"fm-teardown": exitWith(recordJSON(func() int { return teardown.Main(os.Args) })),
		"tmux":        exitWith(tmuxfake.Main),
		"faketmux":    exitWith(tmuxfake.Control),
		"herdr":       exitWith(herdrfake.Main),
		"zellij":      exitWith(zellijfake.Main),
	})
}

// exitWith turns a main that returns its exit code into one testscript runs
// as a command.
func exitWith(main func() int) func() { return func() { os.Exit(main()) } }

func TestScripts(t *testing.T) {
	if f := flag.Lookup("test.run"); (f == nil || f.Value.String() == "") && state.FaultsBuilt {
		// Cleanup runs once every (parallel) script has finished. Without
		// -tags fmfault the scripts that drive a fault seam skip, and some
		// schemas are exercised only there.
		t.Cleanup(func() { checkCoverage(t) })
	}
	testscript.Run(t, scriptParams("testdata"))
}

func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir: dir,
		// A script names what it runs (exec fm-send), so a typo is a missing
		// program, not a silently different builtin; UPDATE_SCRIPTS=1 rewrites
		// a script's cmp files from what the binaries print now.
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") == "1",
		// [fmfault]: the test binary has the fault seams (make test builds
		// it with -tags fmfault); a script that drives one skips without.
		Condition: func(cond string) (bool, error) {
			if cond == "fmfault" {
				return state.FaultsBuilt, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, "home")
			for _, d := range []string{"state", "data", "config"} {
				if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
					return err
				}
			}
			if err := setupJSONLog(e); err != nil {
				return err
			}
			e.Setenv("FM_HOME", home)
			e.Values[paneShellsKey{}] = map[string]*paneShell{}
			// The fake agents keep their record (transcript, rollout) under
			// HOME, as the real CLIs do; fm-send confirms a submit from it.
			agentHome := filepath.Join(e.WorkDir, "agenthome")
			if err := os.MkdirAll(agentHome, 0o755); err != nil {
				return err
			}
			e.Setenv("HOME", agentHome)
			e.Setenv("FM_SEND_RECORD_WAIT", "0.3")
			e.Setenv("FAKE_TMUX_DIR", filepath.Join(e.WorkDir, "tmux"))
			e.Setenv("FAKE_HERDR_DIR", filepath.Join(e.WorkDir, "herdr"))
			e.Setenv("FAKE_ZELLIJ_DIR", filepath.Join(e.WorkDir, "zellij"))
			e.Setenv("FM_CONTROL_POLL", "0.01")
			e.Setenv("FM_CONTROL_SETTLE_WAIT", "0.05")
			e.Setenv("FM_CONTROL_CANCEL_WAIT", "0.3")
			e.Setenv("FM_CONTROL_EXIT_WAIT", "0.2")
			e.Setenv("FM_CONTROL_LAUNCH_WAIT", "0.2")
			e.Setenv("FM_SEND_SLEEP", "0.05")
			e.Setenv("FM_SPAWN_WAIT", "0.2")
			e.Setenv("TMUX", "")
			e.Setenv("HERDR_ENV", "")
			// git commits in scripts need an identity and no user config.
			for k, v := range map[string]string{"GIT_AUTHOR_NAME": "fm", "GIT_AUTHOR_EMAIL": "fm@example.com", "GIT_COMMITTER_NAME": "fm", "GIT_COMMITTER_EMAIL": "fm@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"} {
				e.Setenv(k, v)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"snap":        cmdSnap,
			"unchanged":   cmdUnchanged,
			"holdlock":    cmdHoldLock,
			"bytes":       cmdBytes,
			"expand":      cmdExpand,
			"exitcode":    cmdExitCode,
			"treesnap":    cmdTreeSnap,
			"treesame":    cmdTreeSame,
			"gitwt":       cmdGitWorktree,
			"stoppedtree": cmdStoppedTree,
			"paneshell":   cmdPaneShell,
			"inpane":      cmdInPane,
			"msgid":       cmdMsgID,
			"runhint":     cmdRunHint,
		},
	}
}

// snap FILE... remembers the files' bytes; unchanged FILE... compares them.
func cmdSnap(ts *testscript.TestScript, neg bool, args []string) {
	for _, f := range args {
		data, err := os.ReadFile(ts.MkAbs(f))
		if err != nil {
			ts.Fatalf("snap %s: %v", f, err)
		}
		ts.Check(os.WriteFile(ts.MkAbs(f)+".snap", data, 0o644))
	}
}

func cmdUnchanged(ts *testscript.TestScript, neg bool, args []string) {
	for _, f := range args {
		want, err := os.ReadFile(ts.MkAbs(f) + ".snap")
		ts.Check(err)
		got, err := os.ReadFile(ts.MkAbs(f))
		if err != nil {
			ts.Fatalf("%s: %v", f, err)
		}
		same := bytes.Equal(want, got)
		if same == neg {
			ts.Fatalf("%s: changed=%v, want changed=%v\n--- before\n%s--- after\n%s", f, !same, neg, want, got)
		}
	}
}

// holdlock PATH holds an flock on PATH for the rest of the script, as a
// concurrent lifecycle action would.
func cmdHoldLock(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: holdlock PATH")
	}
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_CREATE|os.O_RDWR, 0o644)
	ts.Check(err)
	ts.Check(syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	ts.Defer(func() { f.Close() })
}

// bytes FILE HEX asserts a file holds exactly these bytes (hex, spaces ignored).
func cmdBytes(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: bytes FILE HEX...")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	got := fmt.Sprintf("%x", data)
	want := strings.ToLower(strings.Join(args[1:], ""))
	if (got == want) == neg {
		ts.Fatalf("%s holds %s, want %s", args[0], got, want)
	}
}

// expand FILE... replaces $VAR references (such as $WORK) in the files with
// the script's environment, since txtar sections are literal.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	for _, f := range args {
		data, err := os.ReadFile(ts.MkAbs(f))
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(os.Expand(string(data), ts.Getenv)), 0o644))
	}
}

// msgid VAR sets VAR to the message id (message=...) the last command
// printed on stdout or stderr, so a script can wait for that very send.
func cmdMsgID(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: msgid VAR")
	}
	m := messageIDPattern.FindString(ts.ReadFile("stdout") + ts.ReadFile("stderr"))
	if m == "" {
		ts.Fatalf("msgid: the last command printed no message id")
	}
	ts.Setenv(args[0], m)
}

var messageIDPattern = regexp.MustCompile(`m[0-9]{8}T[0-9]{6}-[0-9a-f]{8}`)

// exitcode N CMD [ARGS...] runs CMD like exec and asserts it exits with
// status N. The exit-code classes (1 refused, 2 not a verb or bad command
// line, 3 unconfirmed, 4 a wait timed out) are contract, and `! exec`
// accepts any non-zero status.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N CMD [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: run %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// treesnap DIR remembers every entry under DIR (path, mode, size, bytes, link
// target); treesame DIR asserts nothing was added, removed or changed since:
// a read-only verb must leave the home byte-identical, lock files included.
// treesame -audit DIR leaves the tasks' audit trails out of the comparison,
// for a verb that refuses yet must keep the attempt (docs/security.md).
func cmdTreeSnap(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: treesnap DIR")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]+".treesnap"), []byte(treeListing(ts, args[0])), 0o644))
}

func cmdTreeSame(ts *testscript.TestScript, neg bool, args []string) {
	audit := len(args) == 2 && args[0] == "-audit"
	if audit {
		args = args[1:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: treesame [-audit] DIR")
	}
	wantBytes, err := os.ReadFile(ts.MkAbs(args[0] + ".treesnap"))
	ts.Check(err)
	want, got := string(wantBytes), treeListing(ts, args[0])
	if audit {
		want, got = withoutAudit(want), withoutAudit(got)
	}
	if (got == want) == neg {
		ts.Fatalf("%s changed=%v, want changed=%v\n--- before\n%s--- after\n%s", args[0], got != string(want), neg, want, got)
	}
}

// withoutAudit drops the listing's audit trails (state/<id>.audit).
func withoutAudit(listing string) string {
	var keep []string
	for _, line := range strings.SplitAfter(listing, "\n") {
		if path, _, _ := strings.Cut(line, " "); !strings.HasSuffix(path, ".audit") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "")
}

func treeListing(ts *testscript.TestScript, dir string) string {
	out, err := hometree.Listing(ts.MkAbs(dir))
	ts.Check(err)
	return out
}

// gitwt DIR... makes each DIR a git repository with one commit, as a task's
// worktree is; fm-spawn --worktree adopts only a git worktree root.
func cmdGitWorktree(ts *testscript.TestScript, neg bool, args []string) {
	for _, d := range args {
		if err := gitwt.Init(ts.MkAbs(d)); err != nil {
			ts.Fatalf("gitwt %s: %v", d, err)
		}
	}
}
