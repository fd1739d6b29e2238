package control

import (
	"context"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/task"
)

// toolCommands are the read-only and repair commands beside the lifecycle
// verbs: status reads, recover settles a torn relaunch.
func toolCommands(d edge.Deps) []*ucli.Command {
	cmds := []*ucli.Command{
		{
			Name:      "status",
			Usage:     "show a task's record, agent state, busy state and relaunch journal (read-only)",
			UsageText: "fm-control status <id> [--json]",
			Description: `Reads without acting and without holding the lifecycle lock.

Examples:
   fm-control status t1
   fm-control status t1 --json`,
			Action: func(ctx context.Context, cmd *ucli.Command) error {
				return runTool(d, cmd, func(ctl *Controller, id string) error { return ctl.Status(ctx, id) })
			},
		},
		{
			Name:      "recover",
			Usage:     "settle a relaunch, a spawn or a teardown whose process died mid-way (finish, roll back, or remove an agent-free orphan window)",
			UsageText: "fm-control recover <id> [--json]",
			Description: `Reads state/<id>.control-relaunch. A journal still in a running phase whose
process is gone is either completed (the new record is published and its agent
is alive) or rolled back exactly as a failure in that phase would have been.
A complete or failed journal is reported and left alone.

A fresh fm-spawn killed after creating its window leaves state/<id>.spawn-intent:
recover then adopts the window (the record was published), clears the intent
(the window is gone), or removes the window when it is an agent-free shell in
the intended worktree. A window running an agent is never removed.

A teardown killed mid-way leaves state/<id>.teardown: recover undoes it (removes
the journal; the task stays) while its agent was not yet proven stopped, or
when its worktree no longer holds only landed work, and otherwise finishes it:
closes the endpoint, removes the worktree and branch, archives the records.

Examples:
   fm-control recover t1`,
			Action: func(ctx context.Context, cmd *ucli.Command) error {
				return runTool(d, cmd, func(ctl *Controller, id string) error { return ctl.Recover(ctx, id) })
			},
		},
	}
	// list, wait and read: the read-only verbs of the capability table.
	for _, c := range cmds {
		cli.TaskCommand(c, edge.Tasks(d.Tunables.Home), nil)
	}
	return append(cmds, readCommands(d)...)
}

func runTool(d edge.Deps, cmd *ucli.Command, fn func(*Controller, string) error) error {
	id, err := taskArg(d.Tunables.Home, cmd)
	if err != nil {
		return err
	}
	p := d.Printer(cmd.Bool("json"))
	return task.NewAuthority("fm-control", d.Tunables, p.Warn).Guard(cmd.Name, id, func() error {
		return fn(NewController(d.Env, d.Tunables, d.Runner, p), id)
	})
}
