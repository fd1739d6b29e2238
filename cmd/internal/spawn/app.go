package spawn

import (
	"context"
	"fmctl/backends"
	"fmctl/backends/mux"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"fmctl/authority"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/fleet"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
)

// usageText lists --kind's and --backend's values from the capability table.
// A flag a first spawn cannot do without is written bare, as required:
// --harness and --brief have defaults only a home set up for them has (the
// description says which).
func usageText() string {
	return `fm-spawn <id> --harness H --project REPO --brief FILE [--base REF] [--branch NAME] [--kind ` + strings.Join(harness.KindNames(), "|") +
		`] [--model M] [--effort E] [--permissions ` + strings.Join(harness.PermissionModes(), "|") + `] [--backend ` + strings.Join(harness.AdapterBackendNames(), "|") + `] [--json]
fm-spawn <id> --harness H --worktree DIR --brief FILE [--project REPO] [--shared-worktree] [...]
fm-spawn <id> ... --grant VERBS@TARGET [--grant ...]   (the operator's alone; docs/security.md)
fm-spawn <id> --relaunch [--harness H] [--model M] [--effort E] [--json]`
}

const description = `--project REPO adds the task's worktree (git worktree add, branch fm/<id> or
--branch, from --base or origin/HEAD) at <project>-worktrees/<id>, or under
[spawn] worktrees in config/fm.toml; --worktree DIR adopts an existing, clean
git worktree root instead. Without --harness: config/crew-harness, or for a
secondmate config/secondmate-harness (its worktree becomes its own home).
Without --brief: data/<id>/brief.md, which must be written already. The
backend: --backend, FM_BACKEND, config/backend, the multiplexer fm-spawn runs
in, then tmux.

It creates the endpoint fm-<id> in the worktree, publishes state/<id>.meta,
types the harness's launch line pointing the agent at data/<id>/brief.md, and
waits up to FM_SPAWN_WAIT: ready=confirmed once the agent's composer is drawn
with no dialog; ready=starting (still coming up) exits 0; a launch line the
shell ended (launch-failed) and ready=blocked (a trust, sign-in or API-key
dialog, nothing typed into it) exit 1. It refuses a worktree an agent or
another live task uses, unless --shared-worktree. A spawn killed mid-way is
settled by the next fm-spawn <id> or by fm-control recover <id>.

--relaunch adopts the recorded endpoint and worktree, once proven agent-free,
for a replacement agent. --grant lets the new task's agent act on other
tasks; only the operator grants, never a task's own pane.

Examples:
   fm-spawn t1 --harness claude --project ~/src/app --brief brief.md
   fm-spawn t3 --harness claude --worktree ~/wt/t3 --brief brief.md
   fm-spawn t1 --relaunch --harness opencode`

// App builds the fm-spawn command line.
func App(d edge.Deps) *ucli.Command {
	app := &ucli.Command{
		Name:        "fm-spawn",
		Usage:       "launch an agent for a task into an endpoint and worktree",
		UsageText:   usageText(),
		Description: description,
		Flags:       append(flags(), fleet.HostFlag()),
		// --grant's value holds commas (exit,send@t1): one flag, one rule.
		DisableSliceFlagSeparator: true,
		// A <host>/<id> is spawned by that host's fm-spawn (package fleet).
		Action: fleet.Remote(d, "fm-spawn", func(ctx context.Context, cmd *ucli.Command) error {
			req, err := request(cmd)
			if err != nil {
				return err
			}
			if req.ID == "" {
				if cmd.NumFlags() == 0 {
					return cli.HelpForMissing(cmd, "fm-spawn needs a task id: fm-spawn <id> [flags]")
				}
				return fault.Usage("fm-spawn needs a task id: fm-spawn <id> [flags] (see fm-spawn --help)")
			}
			return guarded(ctx, d, req)
		}),
	}
	cli.Conventions(cli.TaskCommand(app, edge.Tasks(d.Tunables.Home), nil), d.IO())
	return app
}

// guarded spawns once the caller may: a fresh spawn is the spawn verb, a
// --relaunch the relaunch verb, and a --grant is the operator's alone.
func guarded(ctx context.Context, d edge.Deps, req Request) error {
	a := task.NewAuthority("fm-spawn", d.Tunables, d.Printer(req.JSON).Warn)
	verb := authority.Spawn
	if req.Relaunch {
		verb = authority.Relaunch
	}
	run := func() error {
		return a.GuardAs(verb, req.ID, func(c authority.Caller) error {
			req.SpawnedBy = c.Task
			return spawn(ctx, d, req)
		})
	}
	if len(req.Grants) > 0 {
		return a.Guard(authority.Grant, req.ID, run)
	}
	return run()
}

func spawn(ctx context.Context, d edge.Deps, req Request) error {
	s := Spawner{Env: d.Env, Tunables: d.Tunables, Runner: d.Runner, Print: d.Printer(req.JSON)}
	var res Result
	var err error
	if req.Relaunch {
		req.TxID = d.Tunables.Spawn.RelaunchTx
		res, err = s.Relaunch(ctx, req)
	} else {
		res, err = s.Fresh(ctx, req)
	}
	if err != nil {
		return err
	}
	s.Print.Outcome(cli.Outcome{Word: "spawned", ID: req.ID, Facts: res.Facts})
	if attach := fault.Get(res.Facts, "attach"); attach != "" && !req.JSON && !insideBackend(d, res.Record.Backend()) {
		s.Print.Notice("watch %s's agent with: %s", req.ID, attach)
	}
	if res.Ready == "blocked" {
		return fault.Failed("%s's agent is up at %s but stopped at its %s dialog; nothing was typed into it", req.ID, res.Record.Window(), res.Dialog).Coded(fault.EDialog).
			Hint("answer the dialog in the pane (or fix the harness's setup), then send")
	}
	if res.Ready == "starting" {
		// The commonest first-run cause is a pane whose login shell has
		// another PATH than fm-spawn (docs/backends/tmux.md).
		h := res.Record.Harness()
		s.Print.Notice("%s's agent was placed at %s but had not come up within the wait; look at it before launching again (if its shell says %s was not found, pin it in config/fm.toml: [harness.%s] binary = \"/path/to/%s\")", req.ID, res.Record.Window(), h, h, h)
	}
	return nil
}

// insideBackend reports whether fm-spawn runs inside the multiplexer the
// agent was placed on: the person is already attached, and the hint would
// only nest a client in its own server.
func insideBackend(d edge.Deps, backend string) bool {
	name, _ := mux.Detect(backends.Env(d.Env))
	return name == backend
}

// Main runs fm-spawn with the process's real edges.
func Main(args []string) int {
	d := edge.OSDeps()
	return cli.Run(App(d), args, d.IO())
}
