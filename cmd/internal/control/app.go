package control

import (
	"fmt"
	"io"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"fmctl/cmd/internal/cli"
	"fmctl/config"
	"fmctl/harness"
)

var verbExamples = map[string]string{
	"interrupt": `Sends the harness's verified interrupt key (repeated where it must be, then
its composer clear), then proves the agent is still alive. cancel=confirmed is
reported only from an adapter-owned acknowledgement, or when the agent's own
telemetry (state/<id>.agent-state) reports its turn ended after the keys.

Examples:
   fm-control interrupt t1
   fm-control interrupt t1 --json`,
	"exit": `Types the harness's exit command (interrupting first an agent whose telemetry
reports a turn, and always a codex not proven idle) and waits until the
backend's classifier proves the agent stopped. codex's /quit leaves a running
turn in its daemon: unless codex reports the turn ended after the interrupt,
exit says exit=unconfirmed background-turn=unconfirmed (exit 3). The endpoint,
the worktree and every uncommitted change stay.

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

const relaunchSynopsis = "<id> [--harness H] [--model M] [--effort low|medium|high|xhigh|max] (--note TEXT | --note-file PATH) [--json]"

// App builds the fm-control command line.
func App(d cli.Deps) *ucli.App {
	jsonOut := new(bool)
	app := &ucli.App{
		Name:      "fm-control",
		Usage:     "run an allowlisted lifecycle verb on a task's agent",
		UsageText: "fm-control <verb> <id> [flags]\nfm-control list [--json]\nfm-control capabilities [--json]",
		Description: `The control plane: a closed allowlist of lifecycle verbs addressed to an exact
task id. No free text, no raw keys. Each verb proves its postcondition or
reports it unconfirmed.

Exit status: 0 success; 1 refused or failed (the message says which, and what to
do); 2 not a verb, or the command line is incomplete; 4 (wait) the timeout
passed before the condition held.

Examples:
   fm-control interrupt t1
   fm-control exit t1
   fm-control relaunch t1 --harness codex --note "continue from the failing test"`,
		Version:         cli.BuildVersion(),
		HideHelpCommand: true,
		Action: func(c *ucli.Context) error {
			if c.NArg() == 0 {
				return ucli.ShowAppHelp(c)
			}
			return unknownVerb(d.Env, c.Args().First())
		},
	}
	for _, v := range harness.Verbs() {
		if v.Lifecycle {
			app.Commands = append(app.Commands, lifecycleCommand(d, v, jsonOut))
		}
	}
	app.Commands = append(app.Commands, toolCommands(d, jsonOut)...)
	app.Commands = append(app.Commands, capabilitiesCommand(d, jsonOut), agentEventCommand(d))
	cli.Conventions(app)
	usageError := app.OnUsageError
	app.OnUsageError = func(c *ucli.Context, err error, isSub bool) error {
		// A flag in the verb position (`fm-control --key Escape t1`) is a
		// request for something outside the allowlist, so it is refused
		// as a non-verb, listing the verbs, not as a flag-parsing slip.
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok && !isSub {
			return unknownVerb(d.Env, flagSpelling(name))
		}
		return usageError(c, err, isSub)
	}
	app.Metadata = map[string]any{"json": jsonOut}
	return app
}

func lifecycleCommand(d cli.Deps, v harness.Verb, jsonOut *bool) *ucli.Command {
	synopsis := verbSynopsis
	if v.Name == "relaunch" {
		synopsis = relaunchSynopsis
	}
	return &ucli.Command{
		Name:            v.Name,
		Usage:           v.Purpose,
		UsageText:       "fm-control " + v.Name + " " + synopsis,
		Description:     verbExamples[v.Name] + "\n\nPostcondition: " + v.Postcondition,
		SkipFlagParsing: true,
		HideHelpCommand: true,
		BashComplete:    cli.CompleteTaskArgs(d),
		Action: func(c *ucli.Context) error {
			inv, err := parseVerbArgs(c.Args().Slice())
			*jsonOut = inv.JSON
			if inv.Help {
				return ucli.ShowCommandHelp(c.Lineage()[1], v.Name)
			}
			if err != nil {
				return err
			}
			if _, err := config.ResolveHome("fm-control", d.Env); err != nil {
				return err
			}
			if inv.ID == "" {
				return cli.Usage("fm-control %s needs a task id: fm-control %s %s", v.Name, v.Name, synopsis)
			}
			if v.Name != "relaunch" && inv.relaunchOnly {
				return cli.Failed("--harness, --model, --effort, --note and --note-file apply to 'relaunch' only")
			}
			ctx, cancel := cli.Context()
			defer cancel()
			return NewController(d.Env, d.Runner, d.Printer(inv.JSON)).Lifecycle(ctx, v.Name, inv.ID, inv.Opts)
		},
	}
}

// unknownVerb refuses anything outside the allowlist, listing it. resume
// gets its own explanation because it is the verb people reach for.
func unknownVerb(env config.Env, verb string) error {
	if _, err := config.ResolveHome("fm-control", env); err != nil {
		return err
	}
	var b strings.Builder
	if verb == "resume" {
		b.WriteString("'resume' is not a control verb: resuming an exited agent is not deterministic across the verified adapters (codex and grok resume only from a session id printed at exit, opencode continues the most recent session for the directory, and claude, pi and kimi have no verified pane-resume contract). Use 'relaunch', which starts a fresh agent from the brief on disk in the same endpoint and worktree")
	} else {
		fmt.Fprintf(&b, "'%s' is not a control verb", printableVerb(verb))
	}
	b.WriteString("\nallowed verbs:")
	others := []string{"status", "recover", "capabilities"}
	for _, v := range harness.Verbs() {
		if v.Lifecycle {
			fmt.Fprintf(&b, "\n  %s", v.Name)
		} else {
			others = append(others, v.Name)
		}
	}
	b.WriteString("\nother commands: " + strings.Join(others, ", "))
	return cli.Usage("%s", b.String())
}

// flagSpelling restores the dashes Go's flag package strips from an unknown
// flag's name: one for a single letter, two for a word.
func flagSpelling(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func printableVerb(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

func capabilitiesCommand(d cli.Deps, jsonOut *bool) *ucli.Command {
	return &ucli.Command{
		Name:      "capabilities",
		Usage:     "print the capability table (verbs, harness mechanics, backend abilities)",
		UsageText: "fm-control capabilities [--json]",
		Description: `The single owner of every interrupt key, repeat count, composer clear, exit
command, supported kind, launch flag and backend ability the binaries use.

Examples:
   fm-control capabilities
   fm-control capabilities --json | jq '.harnesses[] | {name, interrupt_key, exit_command}'`,
		HideHelpCommand: true,
		Flags:           []ucli.Flag{&ucli.BoolFlag{Name: "json", Usage: "print the table as JSON"}},
		Action: func(c *ucli.Context) error {
			*jsonOut = c.Bool("json")
			return printCapabilities(d.Stdout, c.Bool("json"))
		},
	}
}

func printCapabilities(w io.Writer, asJSON bool) error {
	if asJSON {
		data, err := harness.JSON()
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	}
	_, err := io.WriteString(w, harness.Text())
	return err
}

// Main runs fm-control with the process's real edges.
func Main(args []string) int {
	d := cli.OSDeps()
	app := App(d)
	return cli.Run(app, args, d, func() bool { return *app.Metadata["json"].(*bool) })
}
