package control

import (
	"bytes"
	"context"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/fleet"
	"fmctl/cmd/internal/task"
	"fmctl/config"
)

// localOnly are the commands that never take a <host>/<id>.
var localOnly = map[string]bool{"list": true, "capabilities": true, "agent-event": true, "serve": true, "hosts": true}

// acrossHosts lets every task verb take <host>/<id> (run on that host by
// package fleet) and list take --all-hosts.
func acrossHosts(d edge.Deps, cmds []*ucli.Command) {
	for _, c := range cmds {
		if !localOnly[c.Name] {
			c.Action = fleet.Remote(d, "fm-control", c.Action)
			c.Flags = append(c.Flags, fleet.HostFlag())
			continue
		}
		if c.Name != "list" {
			continue
		}
		c.Flags = append(c.Flags, &ucli.BoolFlag{Name: "all-hosts", Usage: "list this machine's tasks and every host's of config/hosts.toml, asked in parallel"})
		local := c.Action
		c.Action = func(ctx context.Context, cmd *ucli.Command) error {
			if !cmd.Bool("all-hosts") {
				return local(ctx, cmd)
			}
			if cmd.NArg() > 0 {
				return fault.Usage("fm-control list takes no task id (it lists every task); got '%s'", cmd.Args().First())
			}
			if caller, ok := taskCaller(d); ok {
				// No grant names another host's task (docs/security.md).
				d.Printer(false).Notice("run from inside task %s's pane, list --all-hosts shows this machine's tasks only", caller)
				return local(ctx, cmd)
			}
			return fleet.ListAllHosts(ctx, d, cmd.Bool("json"), func(ctx context.Context) ([]byte, error) {
				var out, errs bytes.Buffer
				p := cli.Printer{Out: &out, Err: &errs, JSON: true}
				if err := NewController(d.Env, d.Tunables, d.Runner, p).List(ctx); err != nil {
					return nil, err
				}
				return out.Bytes(), nil
			})
		}
	}
}

// taskCaller names the task whose pane runs this process, if any.
func taskCaller(d edge.Deps) (string, bool) {
	home, err := config.LocateHome("fm-control", d.Tunables.Home)
	if err != nil {
		return "", false
	}
	caller, err := task.NewAuthority("fm-control", d.Tunables, nil).Caller(home)
	// A caller that cannot be told apart is not given other hosts either.
	if err != nil {
		return "unknown", true
	}
	return caller.Task, !caller.Operator()
}
