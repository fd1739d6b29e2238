// Package matrix runs every verb on every shipped backend, against the fake
// multiplexer CLIs, and derives each expected outcome from the capability
// table: a backend that can deliver a key gets it, one with a
// recovery-grade classifier can exit and relaunch, one without is refused
// before anything is sent.
package matrix

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v3"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/control"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/send"
	"fmctl/cmd/internal/spawn"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/tests/testbin"
)

var fakeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fmctl-matrix-")
	if err != nil {
		panic(err)
	}
	fakeBin = dir
	if err := testbin.Build(testbin.Dir(dir), nil, "./tests/fakes/tmux/cmd/tmux", "./tests/fakes/herdr/cmd/herdr", "./tests/fakes/zellij/cmd/zellij"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type world struct {
	t    *testing.T
	env  map[string]string
	home string
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, home: t.TempDir()}
	for _, d := range []string{"state", "data", "config"} {
		if err := os.MkdirAll(filepath.Join(w.home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fakes := t.TempDir()
	for _, d := range []string{"tmux", "herdr", "zellij"} {
		if err := os.MkdirAll(filepath.Join(fakes, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The fakes read their state dirs from the environment the runner passes on.
	t.Setenv("FAKE_TMUX_DIR", filepath.Join(fakes, "tmux"))
	t.Setenv("FAKE_HERDR_DIR", filepath.Join(fakes, "herdr"))
	t.Setenv("FAKE_ZELLIJ_DIR", filepath.Join(fakes, "zellij"))
	// The fake agents write their CLI's record under HOME, where fm-send
	// reads it back: a private one, never the user's ~/.claude.
	agentHome := filepath.Join(fakes, "agenthome")
	t.Setenv("HOME", agentHome)
	w.env = map[string]string{
		"HOME":            agentHome,
		"FM_HOME":         w.home,
		"FM_TMUX_BIN":     filepath.Join(fakeBin, "tmux"),
		"FM_HERDR_BIN":    filepath.Join(fakeBin, "herdr"),
		"FM_ZELLIJ_BIN":   filepath.Join(fakeBin, "zellij"),
		"TMUX":            "",
		"FM_CONTROL_POLL": "0.01", "FM_CONTROL_SETTLE_WAIT": "0.05", "FM_CONTROL_EXIT_WAIT": "1",
		"FM_CONTROL_LAUNCH_WAIT": "1", "FM_SEND_SLEEP": "0.05", "FM_SPAWN_WAIT": "1",
	}
	return w
}

func (w *world) run(app func(edge.Deps) *ucli.Command, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	env := func(k string) string { return w.env[k] }
	tun, _ := config.ReadTunables(env)
	d := edge.Deps{
		Env:      env,
		Tunables: tun,
		Runner:   backends.NewExecRunner(""),
		Stdout:   &out, Stderr: &errOut,
	}
	code := cli.Run(app(d), args, d.IO())
	return code, out.String(), errOut.String()
}

// reportTurnEnd records, as the agent's wiring would, that task id's
// current incarnation ended its turn.
func (w *world) reportTurnEnd(id string) {
	w.presentEventKey(id)
	defer delete(w.env, "FM_EVENT_KEY")
	w.run(control.App, "fm-control", "agent-event", id, "turn-finished", "--gen", w.gen(id))
}

// presentEventKey puts task id's event key in the environment, as the
// agent's own environment holds it. A test's in-process fm-spawn wires no
// telemetry (no fm-control binary beside it), so the key file is written
// here when it has none, as a wired launch would have.
func (w *world) presentEventKey(id string) {
	path := filepath.Join(w.home, "state", id+".event-key")
	key, err := os.ReadFile(path)
	if err != nil {
		key = []byte("fixture-key")
		if err := os.WriteFile(path, key, 0o600); err != nil {
			w.t.Fatal(err)
		}
	}
	w.env["FM_EVENT_KEY"] = string(key)
}

// gen is the record's spawn_gen, which agent-event must name.
func (w *world) gen(id string) string {
	data, err := os.ReadFile(filepath.Join(w.home, "state", id+".meta"))
	if err != nil {
		w.t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if g, ok := strings.CutPrefix(line, "spawn_gen="); ok {
			return g
		}
	}
	w.t.Fatalf("%s's record has no spawn_gen", id)
	return ""
}

func (w *world) worktree(id string) string {
	wt := filepath.Join(w.t.TempDir(), "wt-"+id)
	if out, err := exec.Command("git", "init", "-q", wt).CombinedOutput(); err != nil {
		w.t.Fatalf("git init: %v %s", err, out)
	}
	brief := filepath.Join(w.home, "data", id, "brief.md")
	if err := os.MkdirAll(filepath.Dir(brief), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(brief, []byte("do the task\n"), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return wt
}

// expectation is one cell of the verb x backend matrix.
type expectation struct {
	code   int
	stdout string // required prefix of stdout
	stderr string // required substring of stderr
}

func TestVerbBackendMatrix(t *testing.T) {
	for _, name := range []string{"tmux", "herdr", "zellij"} {
		row, _ := harness.LookupBackend(name)
		if !row.Adapter {
			t.Fatalf("%s is listed as shipped but the table says it has no adapter", name)
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			id := "mx-" + name
			wt := w.worktree(id)

			ready := "ready=starting"
			if row.Classifier {
				ready = "ready=confirmed"
			}
			code, out, errOut := w.run(spawn.App, "fm-spawn", id, "--harness", "claude", "--worktree", wt, "--backend", name)
			check(t, "spawn", code, out, errOut, expectation{0, "spawned " + id + " harness=claude kind=ship backend=" + name, ""})
			if !strings.Contains(out, ready) {
				t.Errorf("spawn on %s: want %s (classifier=%v), got %q", name, ready, row.Classifier, out)
			}

			code, out, errOut = w.run(send.App, "fm-send", id, "hello", "matrix")
			check(t, "send text", code, out, errOut, expectation{0, "sent " + id + " backend=" + name, ""})

			for _, k := range harness.NamedKeys {
				want := expectation{0, "key-delivered " + id + " key=" + string(k), ""}
				if !row.CanDeliver(k) {
					want = expectation{1, "", "cannot deliver key " + string(k)}
				}
				code, out, errOut = w.run(send.App, "fm-send", id, "--key", string(k))
				check(t, "send key "+string(k), code, out, errOut, want)
			}

			verified := "endpoint"
			if row.Classifier {
				verified = "agent-alive"
			}
			code, out, errOut = w.run(control.App, "fm-control", "interrupt", id)
			check(t, "interrupt", code, out, errOut, expectation{0, "interrupt-delivered " + id + " harness=claude backend=" + name + " verified=" + verified, ""})

			refused := expectation{1, "", "no recovery-grade agent-state classifier"}
			want := refused
			if row.Classifier {
				want = expectation{0, "relaunched " + id + " harness=codex from=claude", ""}
			}
			before := inputLog(name)
			code, out, errOut = w.run(control.App, "fm-control", "relaunch", id, "--harness", "codex", "--note", "matrix relaunch")
			check(t, "relaunch", code, out, errOut, want)
			if !row.Classifier && inputLog(name) != before {
				t.Errorf("refused relaunch on %s still sent input", name)
			}

			want = refused
			if row.Classifier {
				want = expectation{0, "stopped " + id, ""}
				// Stand in for the codex agent's own Stop hook: without its
				// word, exit cannot prove /quit leaves no running turn.
				w.reportTurnEnd(id)
			}
			before = inputLog(name)
			code, out, errOut = w.run(control.App, "fm-control", "exit", id)
			check(t, "exit", code, out, errOut, want)
			if !row.Classifier && inputLog(name) != before {
				t.Errorf("refused exit on %s still sent input", name)
			}
		})
	}
}

func check(t *testing.T, what string, code int, out, errOut string, want expectation) {
	t.Helper()
	if code != want.code || !strings.HasPrefix(out, want.stdout) || !strings.Contains(errOut, want.stderr) {
		t.Errorf("%s: exit %d stdout %q stderr %q; want exit %d, stdout prefix %q, stderr containing %q",
			what, code, out, errOut, want.code, want.stdout, want.stderr)
	}
}

// inputLog is everything the backend's fake has delivered to panes so far.
func inputLog(backend string) string {
	data, _ := os.ReadFile(filepath.Join(os.Getenv("FAKE_"+strings.ToUpper(backend)+"_DIR"), "input.log"))
	return string(data)
}
