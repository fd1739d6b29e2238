package control

import (
	ucli "github.com/urfave/cli/v2"

	"fmctl/cmd/internal/cli"
)

// toolCommands are the read-only and repair commands beside the lifecycle
// verbs: status reads, recover settles a torn relaunch.
func toolCommands(d cli.Deps, jsonOut *bool) []*ucli.Command {
	cmds := []*ucli.Command{
		{
			Name:      "status",
			Usage:     "show a task's record, agent state, busy state and relaunch journal (read-only)",
			UsageText: "fm-control status <id> [--json]",
			Description: `Reads without acting and without holding the lifecycle lock.

Examples:
   fm-control status t1
   fm-control status t1 --json`,
			SkipFlagParsing: true,
			HideHelpCommand: true,
			BashComplete:    cli.CompleteTaskArgs(d),
			Action: func(c *ucli.Context) error {
				return runTool(c, d, jsonOut, "status", func(ctl *Controller, id string) error { return ctl.Status(c.Context, id) })
			},
		},
		{
			Name:      "recover",
			Usage:     "settle a relaunch or a spawn whose process died mid-way (finish, roll back, or remove an agent-free orphan window)",
			UsageText: "fm-control recover <id> [--json]",
			Description: `Reads state/<id>.control-relaunch. A journal still in a running phase whose
process is gone is either completed (the new record is published and its agent
is alive) or rolled back exactly as a failure in that phase would have been.
A complete or failed journal is reported and left alone.

A fresh fm-spawn killed after creating its window leaves state/<id>.spawn-intent:
recover then adopts the window (the record was published), clears the intent
(the window is gone), or removes the window when it is an agent-free shell in
the intended worktree. A window running an agent is never removed.

Examples:
   fm-control recover t1`,
			SkipFlagParsing: true,
			HideHelpCommand: true,
			BashComplete:    cli.CompleteTaskArgs(d),
			Action: func(c *ucli.Context) error {
				return runTool(c, d, jsonOut, "recover", func(ctl *Controller, id string) error { return ctl.Recover(c.Context, id) })
			},
		},
	}
	// list, wait and read: the read-only verbs of the capability table.
	return append(cmds, readCommands(d, jsonOut)...)
}

func runTool(c *ucli.Context, d cli.Deps, jsonOut *bool, name string, fn func(*Controller, string) error) error {
	inv, err := parseVerbArgs(c.Args().Slice())
	*jsonOut = inv.JSON
	if inv.Help {
		return ucli.ShowCommandHelp(c.Lineage()[1], name)
	}
	if err != nil {
		return err
	}
	if inv.relaunchOnly {
		return cli.Failed("--harness, --model, --effort, --note and --note-file apply to 'relaunch' only")
	}
	if inv.ID == "" {
		return cli.Usage("fm-control %s needs a task id", name)
	}
	return fn(NewController(d.Env, d.Runner, d.Printer(inv.JSON)), inv.ID)
}
