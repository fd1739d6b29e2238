// Package spawn is fm-spawn: it launches a harness for a task into a backend
// endpoint and worktree, or (--relaunch) adopts a task's recorded endpoint and
// worktree for a replacement agent. The launch itself is package launch's.
package spawn

import (
	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/launch"
	"fmctl/cmd/internal/task"
	"fmctl/config"
)

// Spawner runs fm-spawn requests.
type Spawner struct {
	Env      config.Env
	Tunables config.Tunables
	Runner   backends.Runner
	Print    cli.Printer
}

// Result is what a launch achieved.
type Result = launch.Result

// launcher launches fm-spawn's agents.
func (s Spawner) launcher() launch.Launcher {
	return launch.Launcher{Tool: "fm-spawn", Env: s.Env, Tunables: s.Tunables, Runner: s.Runner, Print: s.Print}
}

// tasks opens tasks for fm-spawn.
func (s Spawner) tasks() task.Opener {
	return task.Opener{Tool: "fm-spawn", Env: s.Env, Tunables: s.Tunables, Runner: s.Runner}
}
