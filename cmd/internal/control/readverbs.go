package control

import (
	"context"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/harness"
)

var readSynopsis = map[string]string{
	"list": "[--watch] [--json [FIELDS] | --jq EXPR]",
	"wait": "<id> --for ready|busy|idle|waiting|dead [--timeout D] [--json]\nfm-control wait <id> --for submitted --message-id ID [--timeout D] [--json]",
	"read": "<id> [--lines N] [--follow] [--audit] [--json [FIELDS] | --jq EXPR]",
}

var readExamples = map[string]string{
	"list": `Reads every state/<id>.meta without taking any lock or writing anything, one
line per task, sorted by id: harness, kind, backend, endpoint, agent state
(alive, dead, missing, drifted, unreadable, suspended, unattributed,
unverified), activity (starting, idle, busy, waiting, dead or unknown: see
docs/agent-state.md; never idle without the agent's own report) and relaunch journal phase (none,
complete, failed:<phase>, torn). A record that cannot be read is listed with
its error. tmux tasks are classified from one list-panes call. On a terminal
the list is an aligned table; piped, one stable line per task. Run from
inside a task's pane it lists that task and the tasks its grants name
(docs/security.md).

--watch prints it again each time it changes (redrawn in place on a
terminal; piped, each change after a blank line; with --json one object a
line per change), until SIGINT, SIGTERM or a closed stdout, exit 0.

Examples:
   fm-control list
   fm-control list --watch
   fm-control list --json --watch | jq -c '[.tasks[] | {id, activity}]'
   fm-control list --json | jq '.tasks[] | select(.state != "alive") | .id'`,
	"wait": `Polls (10 ms, backing off to 250 ms) until the condition holds, without any
lock. dead: the backend classifies the endpoint agent-free (needs a
recovery-grade classifier). ready, busy, idle, waiting: the agent's own
telemetry (state/<id>.agent-state, current generation) says so, and the
task's own agent is alive; idle includes ready (no turn runs). A freshly
launched agent (activity=starting) is waited for; one with no report at all
has no signal, and wait says so at once (exit 1) rather than wait. A stopped
agent (suspended), an endpoint the multiplexer does not answer for
(unreadable), another program there (unattributed) and a drifted or gone
endpoint end the wait at once, exit 1, with their code.

submitted: --message-id names a message fm-send could not confirm (its
error line's message=, kept in state/<id>.sends): the wait reads the
agent's own record (transcript, rollout, database, session file) until it
holds that message once more than before the send (outcome proof=record).
Held twice since is exit 3, code duplicated; an id the ledger does not
hold is exit 1, code no-such-message.

Timeout: --timeout, else FM_CONTROL_WAIT, else 30s (seconds or a Go
duration). Exit 0 once reached; 1 refused (no signal, no live agent of the
task's own, no classifier, no such message); 3 a message duplicated; 4 the
timeout passed first.

Examples:
   fm-control wait t1 --for dead --timeout 60
   fm-send t1 "run the tests" && fm-control wait t1 --for busy && fm-control wait t1 --for idle --timeout 10m
   fm-control wait t1 --for submitted --message-id m20260101T120000-0a1b2c3d --timeout 5m`,
	"read": `Prints the pane's last N lines (default 50, at most 10000; tmux includes
scrollback, herdr and zellij the visible screen) with every terminal control
sequence removed (CSI, OSC such as OSC 52 clipboard writes and OSC 8 links,
DCS such as tmux passthrough, APC, PM, SOS, lone ESC, 8-bit C1 forms) and
every control character but newline and tab, so nothing an agent wrote acts on
your terminal. Takes no lock and types nothing. --audit prints the task's
audit trail instead (state/<id>.audit: every change and every refused
attempt, one line each; docs/security.md).

--follow then keeps printing the pane's new lines (those a line diff finds
added; a line an agent redraws in place, such as a spinner, is not printed
again unless it grew) until the agent is gone (dead, or its endpoint missing),
SIGINT, SIGTERM or a closed stdout, exit 0. With --json each batch of new
lines is one read object.

Examples:
   fm-control read t1
   fm-control read t1 --follow
   fm-control read t1 --lines 200 --json | jq -r .text
   fm-control read t1 --audit`,
}

// readCommands are the read-only verbs of the capability table: no lock,
// nothing written, typed JSON.
func readCommands(d edge.Deps) []*ucli.Command {
	var cmds []*ucli.Command
	for _, v := range harness.Verbs() {
		if v.Lifecycle {
			continue
		}
		cmds = append(cmds, readCommand(d, v))
	}
	return cmds
}

func readCommand(d edge.Deps, v harness.Verb) *ucli.Command {
	name := v.Name
	cmd := &ucli.Command{
		Name:        name,
		Usage:       v.Purpose,
		UsageText:   "fm-control " + name + " " + readSynopsis[name],
		Description: readExamples[name] + "\n\nPostcondition: " + v.Postcondition,
		Flags:       readFlags(name),
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			inv, err := parseReadArgs(cmd, d.Tunables)
			if err != nil {
				return err
			}
			ctl := NewController(d.Env, d.Tunables, d.Runner, d.Printer(inv.JSON))
			if inv.Watch {
				defer cli.CatchSIGPIPE()()
				return ctl.Watch(ctx)
			}
			if name == "list" {
				return ctl.List(ctx)
			}
			return ctl.authority().Guard(name, inv.ID, func() error {
				switch {
				case name == "wait":
					if inv.For == "submitted" {
						return ctl.WaitSubmitted(ctx, inv.ID, inv.MessageID, inv.Timeout)
					}
					return ctl.Wait(ctx, inv.ID, inv.For, inv.Timeout)
				case inv.Audit:
					return ctl.ReadAudit(inv.ID)
				case inv.Follow:
					defer cli.CatchSIGPIPE()()
					return ctl.Follow(ctx, inv.ID, inv.Lines)
				}
				return ctl.Read(ctx, inv.ID, inv.Lines)
			})
		},
	}
	if name == "list" {
		cmd.ShellComplete = cli.Completer{Tasks: edge.Tasks(d.Tunables.Home)}.Complete
		return cmd
	}
	return cli.TaskCommand(cmd, edge.Tasks(d.Tunables.Home), map[string][]string{"--for": waitConditions})
}
