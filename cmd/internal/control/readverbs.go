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
	"wait": "<id> --for ready|busy|idle|waiting|dead|done [--timeout D] [--json]\nfm-control wait <id> --for submitted --message-id ID [--timeout D] [--json]",
	"read": "<id> [--lines N] [--follow] [--audit | --record] [--json [FIELDS] | --jq EXPR]",
}

var readExamples = map[string]string{
	"list": `Reads every state/<id>.meta, one line per task sorted by id: harness, kind,
backend, endpoint, agent state, activity (never idle without the agent's own
report) and relaunch journal phase; a record that cannot be read is listed
with its error. No lock is taken and nothing is written. On a terminal it is
an aligned table; piped, one key=value line per task. From inside a task's
pane it lists that task and those its grants name.

--watch prints it again on each change (in place on a terminal; piped, after
a blank line; --json, one object a change) until SIGINT, SIGTERM or a closed
stdout, exit 0.

Examples:
   fm-control list
   fm-control list --watch
   fm-control list --json | jq '.tasks[] | select(.state != "alive") | .id'`,
	"wait": `Polls, without a lock, until the condition holds. ready, busy, idle and
waiting are read from the agent's own telemetry (idle includes ready); a
freshly launched agent is waited for, one that never reported has no signal
(exit 1 at once). done: idle, and the agent's own record ends its newest
turn completed (failed or cancelled: exit 1). submitted: the message
--message-id names (fm-send's message=) is in the agent's own record.

Examples:
   fm-control wait t1 --for dead --timeout 60
   fm-control wait t1 --for done --timeout 10m
   fm-control wait t1 --for submitted --message-id m20260101T120000-0a1b2c3d`,
	"read": `Prints the pane's last N lines (default 50; tmux includes scrollback)
with every control sequence removed. No lock, nothing typed. --audit prints
the audit trail (state/<id>.audit). --follow prints each new line (a line
redrawn in place only if it grew) until the agent is gone or SIGINT.

--record prints the conversation from the agent's own record instead, one
entry a line: "<UTC time> user <message id fm-send gave it>: <text>", reply,
tool-call/tool-result <tool> (cut to 400 bytes), turn-end completed|failed|
cancelled; --json, one entry object a line; --follow, new entries.

Examples:
   fm-control read t1 --follow
   fm-control read t1 --lines 200 --json | jq -r .text
   fm-control read t1 --record --lines 20`,
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
				case inv.Record:
					defer cli.CatchSIGPIPE()()
					return ctl.ReadRecord(ctx, inv.ID, inv.Lines, inv.Follow)
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
