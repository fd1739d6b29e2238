// Package edge holds a binary's side-effect edges: its environment and the
// FM_* variables read once, the command runner, the output streams. The
// binaries' packages take them as Deps, so tests can fake them; cli gets
// only the IO part it prints with.
package edge

import (
	"io"
	"os"
	"strings"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/state"
)

// Deps are a binary's side-effect edges, injected so tests can fake them.
type Deps struct {
	// Env reads the context the binary runs in (TMUX, HERDR_ENV, NO_COLOR);
	// the FM_* variables are read once, into Tunables.
	Env      config.Env
	Tunables config.Tunables
	Runner   backends.Runner
	Stdout   io.Writer
	Stderr   io.Writer
	// Output is filled by cli.Run from the command line's --json field
	// list or --jq before the command runs; every printer of the run
	// shares it.
	Output *cli.Output
	// BadTunables are the FM_* variables set to a value their unit
	// refuses: the run stops on them before any command acts.
	BadTunables []config.BadValue
}

// OSDeps are the real process's edges, and its FM_* variables read once.
func OSDeps() Deps {
	tun, bad := config.ReadTunables(os.Getenv)
	return Deps{Env: os.Getenv, Tunables: tun, BadTunables: bad, Runner: backends.NewExecRunner(tun.RunnerTrace), Stdout: os.Stdout, Stderr: os.Stderr, Output: &cli.Output{}}
}

// IO is what the CLI conventions and printer take of d.
func (d Deps) IO() cli.IO {
	return cli.IO{Env: d.Env, Stdout: d.Stdout, Stderr: d.Stderr, Output: d.Output, Completing: d.Tunables.Completion, CompletionVar: config.CompletionVar,
		Refused: refuseBadTunables(d.BadTunables)}
}

// refuseBadTunables is the usage error (exit 2) a run with bad FM_*
// values stops on: the first on the error line, any others in hints, and
// how to take the defaults instead.
func refuseBadTunables(bad []config.BadValue) error {
	if len(bad) == 0 {
		return nil
	}
	e := fault.Usage("%s", bad[0])
	names := []string{bad[0].Name}
	for _, b := range bad[1:] {
		e = e.Hint("and %s", b)
		names = append(names, b.Name)
	}
	if len(bad) == 1 && bad[0].Default != "" {
		return e.Hint("unset %s to take its default (%s), or set it to a valid value; nothing was done", bad[0].Name, bad[0].Default)
	}
	return e.Hint("unset %s to take the defaults, or set valid values; nothing was done", strings.Join(names, " "))
}

// Printer returns the outcome printer for the chosen output form.
func (d Deps) Printer(json bool) cli.Printer { return d.IO().Printer(json) }

// Tasks is what completion and the id check know of the home's tasks.
func Tasks(home config.HomeVars) cli.Tasks {
	return cli.Tasks{IDs: func() []string { return TaskIDs(home) }, Check: state.CheckTaskArg}
}

// TaskIDs returns the ids of the records in the home's state dir.
func TaskIDs(v config.HomeVars) []string {
	home, err := config.ResolveHome("fmctl", v)
	if err != nil {
		return nil
	}
	return state.Store{Dir: home.State}.TaskIDs()
}
