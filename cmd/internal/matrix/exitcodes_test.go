package matrix

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/control"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/send"
	"fmctl/cmd/internal/spawn"
	"fmctl/config"
	"fmctl/harness"
)

// classCase drives one command into one exit class. "$ID" in args is the
// task the case's world spawned (with harness, default claude, on tmux).
type classCase struct {
	class   int
	args    []string
	harness string
	setup   func(w *world, id string)
}

// binaryCases are fm-send's and fm-spawn's classes; controlCases fm-control's,
// per command. A command of fm-control without a row fails the test, so a
// verb added to the table cannot go untested.
var binaryCases = map[string][]classCase{
	"fm-send": {
		{class: 0, args: []string{"$ID", "hello"}},
		{class: 1, args: []string{"nosuch", "hello"}},
		{class: 2, args: []string{"$ID", "--jsn", "hello"}},
		// a composer that never lets go: typed, Enter sent, unconfirmed
		{class: 3, args: []string{"$ID", "hello"}, setup: func(w *world, _ string) { w.mkdirFake("tmux", "stuck") }},
	},
	"fm-spawn": {
		{class: 0, args: []string{"fresh", "--harness", "claude", "--worktree", "$WT"}},
		{class: 1, args: []string{"$ID", "--relaunch"}}, // its agent is alive: refused
		{class: 2, args: []string{"fresh", "--harness"}},
	},
}

var controlCases = map[string][]classCase{
	"interrupt": {
		{class: 0, args: []string{"$ID"}},
		{class: 1, args: []string{"nosuch"}},
		{class: 2, args: []string{"$ID", "--bogus"}},
	},
	"exit": {
		{class: 0, args: []string{"$ID"}},
		{class: 1, args: []string{"nosuch"}},
		{class: 2, args: []string{"$ID", "--note", "x"}},
		// codex without its own word that the turn ended: exit unconfirmed
		{class: 3, args: []string{"$ID"}, harness: "codex"},
	},
	"relaunch": {
		{class: 0, args: []string{"$ID", "--note", "continue"}},
		{class: 1, args: []string{"nosuch", "--note", "continue"}},
		{class: 2, args: []string{"$ID", "--note"}},
	},
	"rebind": {
		{class: 0, args: []string{"$ID"}},
		{class: 1, args: []string{"nosuch"}},
		{class: 2, args: []string{"$ID", "extra"}},
	},
	"status": {
		{class: 0, args: []string{"$ID"}},
		{class: 1, args: []string{"nosuch"}},
		{class: 2, args: []string{"$ID", "--all"}},
	},
	"recover": {
		{class: 0, args: []string{"$ID"}},
		{class: 1, args: []string{"nosuch"}},
		{class: 2, args: []string{}},
	},
	"list": {
		{class: 0, args: []string{}},
		{class: 1, args: []string{}, setup: func(w *world, _ string) { w.env["FM_HOME"] = "" }},
		{class: 2, args: []string{"$ID"}},
	},
	"wait": {
		{class: 0, args: []string{"$ID", "--for", "idle"}, setup: func(w *world, id string) { w.reportTurnEnd(id) }},
		{class: 1, args: []string{"nosuch", "--for", "dead"}},
		{class: 2, args: []string{"$ID"}},
		{class: 4, args: []string{"$ID", "--for", "dead", "--timeout", "0.1"}},
	},
	"read": {
		{class: 0, args: []string{"$ID"}},
		{class: 1, args: []string{"nosuch"}},
		{class: 2, args: []string{"$ID", "--lines", "0"}},
	},
	"capabilities": {
		{class: 0, args: []string{}},
		{class: 2, args: []string{"--jq", ".["}},
		{class: 2, args: []string{"--json", "nosuch,field"}},
	},
	"completion": {
		{class: 0, args: []string{"bash"}},
		{class: 2, args: []string{"tcsh"}},
	},
	"agent-event": {
		{class: 0, args: []string{"$ID", "turn-finished", "--gen", "$GEN"}, setup: func(w *world, id string) { w.presentEventKey(id) }},
		{class: 1, args: []string{"nosuch", "turn-finished", "--gen", "g1"}},
		// without the task's event key: refused (event-unauthenticated)
		{class: 1, args: []string{"$ID", "turn-finished", "--gen", "$GEN"}},
		{class: 2, args: []string{"$ID", "rm-rf", "--gen", "$GEN"}},
	},
	// a host of config/hosts.toml; class 0 needs a host that answers, which
	// tests/remotessh starts (a real sshd)
	"hosts": {
		{class: 1, args: []string{"check", "nosuch"}},
		{class: 2, args: []string{"check"}},
	},
	// what another machine runs over ssh; class 0 reads standard input to
	// its end, as tests/remotessh and package fleet drive it
	"serve": {
		{class: 1, args: []string{"--home", "/nonexistent-fm-home"}},
		{class: 2, args: []string{}},
	},
	// the built-in help, and `fm-control help <verb>`
	"help": {
		{class: 0, args: []string{"interrupt"}},
		{class: 2, args: []string{"nosuch-verb"}},
	},
}

// Every binary and every fm-control command reaches each exit class it can
// produce, and the classes are rows of the one exit-code table.
func TestExitClasses(t *testing.T) {
	commands := controlCommands(t)
	for _, v := range harness.Verbs() {
		if !slices.Contains(commands, v.Name) {
			t.Errorf("verb %s of the capability table is not an fm-control command", v.Name)
		}
	}
	for _, name := range commands {
		if len(controlCases[name]) == 0 {
			t.Errorf("fm-control %s has no exit-class cases: add its row to controlCases", name)
		}
	}
	for name := range controlCases {
		if !slices.Contains(commands, name) {
			t.Errorf("controlCases has %s, which is not an fm-control command", name)
		}
	}
	for name, cases := range controlCases {
		for _, c := range cases {
			runClassCase(t, "fm-control", append([]string{name}, c.args...), c)
		}
	}
	for bin, cases := range binaryCases {
		for _, c := range cases {
			runClassCase(t, bin, c.args, c)
		}
	}
}

// controlCommands lists fm-control's commands, hidden ones included.
func controlCommands(t *testing.T) []string {
	app := control.App(edge.Deps{Env: func(string) string { return "" }, Tunables: config.DefaultTunables()})
	var names []string
	for _, c := range app.Commands {
		names = append(names, c.Name)
	}
	// urfave adds help itself when it runs
	return append(names, "help")
}

func runClassCase(t *testing.T, bin string, args []string, c classCase) {
	t.Helper()
	if c.class >= len(cli.ExitCodes()) {
		t.Fatalf("%s %v: class %d is not in the exit-code table", bin, args, c.class)
	}
	t.Run(bin+" "+strings.Join(args, " "), func(t *testing.T) {
		w := newWorld(t)
		id := "t1"
		h := c.harness
		if h == "" {
			h = "claude"
		}
		wt := w.worktree(id)
		if code, out, errOut := w.run(spawn.App, "fm-spawn", id, "--harness", h, "--worktree", wt, "--backend", "tmux"); code != 0 {
			t.Fatalf("spawn: exit %d %s %s", code, out, errOut)
		}
		if c.setup != nil {
			c.setup(w, id)
		}
		argv := []string{bin}
		for _, a := range args {
			a = strings.ReplaceAll(a, "$ID", id)
			a = strings.ReplaceAll(a, "$GEN", w.gen(id))
			if a == "$WT" {
				a = w.worktree("fresh")
			}
			argv = append(argv, a)
		}
		app := map[string]func(edge.Deps) *ucli.Command{"fm-send": send.App, "fm-control": control.App, "fm-spawn": spawn.App}[bin]
		code, out, errOut := w.run(app, argv...)
		if code != c.class {
			t.Errorf("%v: exit %d, want %d (%s)\nstdout %q\nstderr %q", argv, code, c.class, cli.ExitCodes()[c.class].Name, out, errOut)
		}
	})
}

// mkdirFake makes a directory in a fake multiplexer's state dir (the tmux
// fake's "stuck" holds every composer's text).
func (w *world) mkdirFake(backend, name string) {
	if err := os.MkdirAll(filepath.Join(os.Getenv("FAKE_"+strings.ToUpper(backend)+"_DIR"), name), 0o755); err != nil {
		w.t.Fatal(err)
	}
}
