// Package edge holds a binary's side-effect edges: its environment and the
// FM_* variables read once, the command runner, the output streams. The
// binaries' packages take them as Deps, so tests can fake them; cli gets
// only the IO part it prints with.
package edge

import (
	"io"
	"os"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
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
}

// OSDeps are the real process's edges, and its FM_* variables read once.
func OSDeps() Deps {
	tun := config.ReadTunables(os.Getenv)
	return Deps{Env: os.Getenv, Tunables: tun, Runner: backends.NewExecRunner(tun.RunnerTrace), Stdout: os.Stdout, Stderr: os.Stderr, Output: &cli.Output{}}
}

// IO is what the CLI conventions and printer take of d.
func (d Deps) IO() cli.IO {
	return cli.IO{Env: d.Env, Stdout: d.Stdout, Stderr: d.Stderr, Output: d.Output, Completing: d.Tunables.Completion, CompletionVar: config.CompletionVar}
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
