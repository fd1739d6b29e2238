// Package teardown is fm-teardown: it finishes a task whose work has landed,
// stopping its agent through exit's postcondition, closing its endpoint,
// removing its worktree and branch, and archiving its records.
package teardown

import (
	"context"

	ucli "github.com/urfave/cli/v3"

	"fmctl/authority"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/fleet"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/phrase"
)

const description = `Refuses unless the task's work has landed: every commit of its branch on a
remote-tracking branch (without a remote: merged into the project's default
branch), nothing uncommitted or untracked, no detached HEAD; a scout needs its
report (data/<id>/report.md), a secondmate a home without tasks of its own.

Then, journaled so fm-control recover can finish it: stops the agent as
fm-control exit does, judges the work again, closes the endpoint, removes the
worktree, deletes the branch and archives state/<id>.* and data/<id>/ under
state/archive/. Nothing else is deleted: the project's main checkout, and a
worktree another task records, are kept.

--force discards the work that has not landed, and says what it discarded;
an agent that exit cannot prove stopped is then killed with its endpoint.

Examples:
   fm-teardown t1
   fm-teardown t2 --force     # discards t2's unpushed commits`

// App builds the fm-teardown command line.
func App(d edge.Deps) *ucli.Command {
	app := &ucli.Command{
		Name:        "fm-teardown",
		Usage:       "finish a task whose work has landed: stop its agent, close its endpoint, remove its worktree and branch, archive its records",
		UsageText:   "fm-teardown <id> [--force] [--json]",
		Description: description,
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "force", Usage: "discard work that has not landed (saying what), and kill an agent exit cannot prove stopped"},
			&ucli.BoolFlag{Name: "json", Usage: "print the outcome as one JSON object (errors as JSON on stderr)"},
			fleet.HostFlag(),
		},
		// A <host>/<id> is torn down by that host's fm-teardown (package fleet).
		Action: fleet.Remote(d, "fm-teardown", func(ctx context.Context, cmd *ucli.Command) error {
			id, err := taskArg(d.Tunables.Home, cmd)
			if err != nil {
				return err
			}
			r := Runner{Env: d.Env, Tunables: d.Tunables, Runner: d.Runner, Print: d.Printer(cmd.Bool("json"))}
			return task.NewAuthority("fm-teardown", d.Tunables, r.Print.Warn).Guard(authority.Teardown, id, func() error {
				return r.Teardown(ctx, id, cmd.Bool("force"))
			})
		}),
	}
	cli.Conventions(cli.TaskCommand(app, edge.Tasks(d.Tunables.Home), nil), d.IO())
	return app
}

// taskArg returns the one task id, the home checked first.
func taskArg(home config.HomeVars, cmd *ucli.Command) (string, error) {
	args := cmd.Args().Slice()
	if len(args) == 0 {
		if cmd.NumFlags() == 0 {
			return "", cli.HelpForMissing(cmd, "fm-teardown needs a task id: fm-teardown <id> [--force] [--json]")
		}
		return "", fault.Usage("fm-teardown needs a task id: fm-teardown <id> [--force] [--json]")
	}
	if _, err := config.ResolveHome("fm-teardown", home); err != nil {
		return "", err
	}
	if len(args) > 1 {
		return "", fault.Usage("unexpected argument '%s': fm-teardown takes one task id (see fm-teardown --help)", phrase.Printable(args[1]))
	}
	return args[0], nil
}

// Main runs fm-teardown with the process's real edges.
func Main(args []string) int {
	d := edge.OSDeps()
	return cli.Run(App(d), args, d.IO())
}
