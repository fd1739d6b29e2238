package control

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/fleet"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/phrase"
)

var verbExamples = map[string]string{
	"interrupt": `Sends the harness's verified interrupt keys (and clear), then proves
the agent still alive. Where fmctl reads the agent's own record and it shows a
turn, the keys go again while it runs (up to interrupt_rounds, within
FM_CONTROL_CANCEL_WAIT). cancel=confirmed rests on the record, an adapter's
ack or the agent's turn-end report; cancel=no-turn on its word
that none ran; else exit 3, cancel=unconfirmed. Messages fm-send left queued
that the agent takes into a new turn: queue=flushed activity=busy; those it
lets go of, untaken=<ids>. --drop-queue cancels that
turn too (queue=dropped dropped=<ids> dropped_to=record|composer) or exits 3.

Examples:
   fm-control interrupt t1
   fm-control interrupt t1 --drop-queue --json`,
	"exit": `Types the harness's exit command (interrupting first an agent whose telemetry
reports a turn, and always a codex not proven idle) and waits until the
backend's classifier proves the agent stopped. codex's /quit leaves a running
turn in its daemon: unless codex reports the turn ended after the interrupt,
exit says exit=unconfirmed background-turn=unconfirmed (exit 3). The endpoint,
the worktree and every uncommitted change stay. Messages fm-send left queued
(submit=queued) that the agent's record never took are named: untaken=<ids>.

Examples:
   fm-control exit t1
   FM_CONTROL_EXIT_WAIT=60 fm-control exit t1`,
	"rebind": `Re-points a record whose endpoint drifted (its tmux window was renamed or
moved, or its session renamed) at the one pane proven to be the task's: it
carries the task's label or recorded pane id, its current directory is the
recorded worktree, and it runs the recorded harness or nothing. A renamed
window gets its label fm-<id> back. Refuses when no pane or several qualify,
naming them. A record that already resolves is left unchanged (exit 0); one
written before the id keys existed gains tmux_pane_id and tmux_window_id.

Examples:
   fm-control rebind t1
   fm-control status t1     # state=drifted before, alive after`,
	"relaunch": `Replaces the agent with a new one in the same endpoint and worktree, as a
journaled transaction (state/<id>.control-relaunch) that completes or rolls back.

Examples:
   fm-control relaunch t1 --note "tests pass; next: the docs"
   fm-control relaunch t1 --harness codex --model gpt-5 --effort high --note-file progress.md
   fm-control relaunch sm1            # a secondmate re-reads config/secondmate-harness`,
}

const verbSynopsis = "<id> [--json]"

// relaunchSynopsis lists --effort's levels from the capability table.
var relaunchSynopsis = "<id> [--harness H] [--model M] [--effort " + strings.Join(harness.Efforts, "|") + "] (--note TEXT | --note-file PATH) [--json]"

// App builds the fm-control command line: one command per verb, each parsed
// by urfave with flags anywhere before "--".
func App(d edge.Deps) *ucli.Command {
	app := &ucli.Command{
		Name:      "fm-control",
		Usage:     "run an allowlisted lifecycle verb on a task's agent",
		UsageText: "fm-control <verb> <id> [flags]\nfm-control list [--json]\nfm-control capabilities [--json]\nfm-control help [verb]",
		Description: `The control plane: a closed allowlist of lifecycle verbs addressed to an exact
task id, with no free text and no raw keys; each verb proves its
postcondition or reports it unconfirmed. Flags go anywhere after the verb
and before "--". A task on another host of config/hosts.toml is <host>/<id>.

Examples:
   fm-control status gpu1/t1
   fm-control relaunch t1 --harness codex --note "continue from the failing test"
   fm-control help relaunch`,
		Flags:         []ucli.Flag{&ucli.BoolFlag{Name: "json", Usage: "print the outcome as one JSON object (errors as JSON on stderr)"}},
		ShellComplete: cli.Completer{Tasks: edge.Tasks(d.Tunables.Home)}.Complete,
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() == 0 {
				return cli.HelpForMissing(cmd, "fm-control needs a verb: fm-control <verb> <id> [flags]")
			}
			return unknownVerb(d.Tunables.Home, cmd.Args().First())
		},
		// A flag in the verb position (`fm-control --key Escape t1`) is a
		// request for something outside the allowlist, so it is refused
		// as a non-verb, listing the verbs, not as a flag-parsing slip.
		OnUsageError: func(ctx context.Context, cmd *ucli.Command, err error, _ bool) error {
			if flag, ok := cli.UnknownFlag(ctx, err); ok {
				return unknownVerb(d.Tunables.Home, flag)
			}
			return cli.UsageError(ctx, cmd, err, false)
		},
	}
	for _, v := range harness.Verbs() {
		if v.Lifecycle {
			app.Commands = append(app.Commands, lifecycleCommand(d, v))
		}
	}
	app.Commands = append(app.Commands, toolCommands(d)...)
	app.Commands = append(app.Commands, capabilitiesCommand(d), agentEventCommand(d), fleet.HostsCommand(d), fleet.ServeCommand(d))
	acrossHosts(d, app.Commands)
	for _, c := range app.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = relaunchOnly
		}
	}
	cli.Conventions(app, d.IO())
	return app
}

func lifecycleCommand(d edge.Deps, v harness.Verb) *ucli.Command {
	synopsis := verbSynopsis
	switch v.Name {
	case "relaunch":
		synopsis = relaunchSynopsis
	case "interrupt":
		synopsis = "<id> [--drop-queue] [--json]"
	}
	cmd := &ucli.Command{
		Name:        v.Name,
		Usage:       v.Purpose,
		UsageText:   "fm-control " + v.Name + " " + synopsis,
		Description: verbExamples[v.Name] + "\n\nPostcondition: " + v.Postcondition,
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			id, err := taskArg(d.Tunables.Home, cmd)
			if err != nil {
				return err
			}
			var opts VerbOptions
			if v.Name == "relaunch" {
				if opts.Relaunch, err = relaunchOptions(cmd); err != nil {
					return err
				}
			}
			opts.DropQueue = v.Name == "interrupt" && cmd.Bool("drop-queue")
			p := d.Printer(cmd.Bool("json"))
			return task.NewAuthority("fm-control", d.Tunables, p.Warn).Guard(v.Name, id, func() error {
				return NewController(d.Env, d.Tunables, d.Runner, p).Lifecycle(ctx, v.Name, id, opts)
			})
		},
	}
	switch v.Name {
	case "relaunch":
		cmd.Flags = relaunchFlags()
	case "interrupt":
		cmd.Flags = []ucli.Flag{&ucli.BoolFlag{Name: "drop-queue", Usage: "cancel too the turn the agent takes its queued messages into after the cancel"}}
	}
	return cli.TaskCommand(cmd, edge.Tasks(d.Tunables.Home), nil)
}

// taskArg returns a verb's one task id. The home is checked first: without
// one nothing else can be looked at, so it is the first thing to fix.
func taskArg(home config.HomeVars, cmd *ucli.Command) (string, error) {
	if _, err := config.ResolveHome("fm-control", home); err != nil {
		return "", err
	}
	args := cmd.Args().Slice()
	switch len(args) {
	case 0:
		return "", fault.Usage("%s needs a task id: %s", cmd.FullName(), cmd.UsageText)
	case 1:
		return args[0], nil
	}
	return "", fault.Usage("unexpected argument '%s': %s takes one task id (see %s --help)", phrase.Printable(args[1]), cmd.FullName(), cmd.FullName())
}

// unknownVerb refuses anything outside the allowlist, listing it. resume
// gets its own explanation because it is the verb people reach for.
func unknownVerb(home config.HomeVars, verb string) error {
	if _, err := config.ResolveHome("fm-control", home); err != nil {
		return err
	}
	var lifecycle []string
	others := []string{"status", "recover", "capabilities"}
	for _, v := range harness.Verbs() {
		if v.Lifecycle {
			lifecycle = append(lifecycle, v.Name)
		} else {
			others = append(others, v.Name)
		}
	}
	var e *fault.Error
	if verb == "resume" {
		e = fault.Usage("'resume' is not a control verb: resuming an exited agent is not deterministic across the verified harnesses").
			Hint("codex and grok resume only from a session id printed at exit, opencode the directory's latest session").
			Hint("claude, pi and kimi have no verified pane-resume contract").
			Hint("use relaunch: it starts a fresh agent from the brief on disk in the same endpoint and worktree")
	} else {
		e = fault.Usage("'%s' is not a control verb", phrase.Printable(verb))
		for _, name := range append(append(lifecycle, others...), "help") {
			if phrase.Close(verb, name) {
				e.Msg += "; did you mean " + name + "?"
				break
			}
		}
	}
	return e.Hint("allowed verbs: %s", strings.Join(lifecycle, ", ")).
		Hint("other commands: %s (help on one: fm-control help <verb>)", strings.Join(append(others, "completion"), ", "))
}

func capabilitiesCommand(d edge.Deps) *ucli.Command {
	return &ucli.Command{
		Name:      "capabilities",
		Usage:     "print the capability table (verbs, harness mechanics, backend abilities) and the FM_* tunables",
		UsageText: "fm-control capabilities [--markdown | --json]",
		Description: `The single owner of every interrupt key, repeat count, composer clear, exit
command, supported kind, launch flag and backend ability the binaries use, and
every FM_* variable they read: its unit, default and value in this run. On a
terminal it is tables that fit the screen; piped, or with --markdown, the
Markdown tables the README embeds.

Examples:
   fm-control capabilities
   fm-control capabilities --json | jq '.harnesses[] | {name, interrupt_key, exit_command}'`,
		Flags: []ucli.Flag{&ucli.BoolFlag{Name: "markdown", Usage: "print the Markdown tables the README embeds, even on a terminal"}},
		Action: func(_ context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return fault.Usage("unexpected argument '%s': fm-control capabilities takes no task id", phrase.Printable(cmd.Args().First()))
			}
			asJSON := cmd.Bool("json") || d.Output.Filtering()
			if asJSON && cmd.Bool("markdown") {
				return fault.Usage("--markdown and --json are two forms of the table; pass one")
			}
			if d.Output.Filtering() {
				d.Printer(true).Value(capabilities{harness.Snapshot(), d.Tunables.Settings()})
				return nil
			}
			p := d.Printer(asJSON)
			if p.OutTTY && !asJSON && !cmd.Bool("markdown") {
				return printCapabilitiesView(d.Stdout, p.Width, harness.Snapshot(), d.Tunables.Settings())
			}
			return printCapabilities(d.Stdout, d.Tunables, asJSON)
		},
	}
}

// capabilities is the capability table and the tunables with their values
// in this run, as --json prints them.
type capabilities struct {
	harness.Table
	Tunables []config.Setting `json:"tunables"`
}

func printCapabilities(w io.Writer, tun config.Tunables, asJSON bool) error {
	if asJSON {
		data, err := json.MarshalIndent(capabilities{harness.Snapshot(), tun.Settings()}, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	}
	_, err := io.WriteString(w, harness.Text()+"\n"+config.Markdown(tun.Settings(), true))
	return err
}

// Main runs fm-control with the process's real edges.
func Main(args []string) int {
	d := edge.OSDeps()
	return cli.Run(App(d), args, d.IO())
}
