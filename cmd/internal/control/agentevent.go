package control

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v3"

	"fmctl/authority"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// agentEventCommand is the one entry point the harnesses' hooks, notify
// programs, plugins and extensions call (fm-spawn wires them). It is not a
// lifecycle verb: it never touches the pane, takes no lock and makes no
// multiplexer call, because a hook runs on every prompt and must never
// block the agent. It only records what the agent said about itself.
func agentEventCommand(d edge.Deps) *ucli.Command {
	return cli.TaskCommand(&ucli.Command{
		Name:      "agent-event",
		Hidden:    true,
		Usage:     "record an agent's own lifecycle event (called by the wiring fm-spawn installs)",
		UsageText: "fm-control agent-event [--home H [--state-dir S]] <id> <event> --gen G",
		Description: `Writes state/<id>.agent-state atomically when G is the record's current
spawn_gen; an older incarnation's event is ignored (exit 0, nothing written).
A current event must come with the incarnation's event key in ` + harness.EventKeyEnv + `
(fm-spawn puts it in the agent's launch environment, which its hooks
inherit); without it the event is refused (exit 1, event-unauthenticated) and
counted in state/<id>.event-refused (status: events_refused).
Events: ` + strings.Join(state.AgentEventNames(), ", ") + `.`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "gen", Usage: "the generation the wiring was installed with", Validator: cli.Value("gen")},
			// The wiring names the task's home here, not through `env`
			// (one process start less on every prompt); they stand in
			// for FM_HOME and FM_STATE_OVERRIDE.
			&ucli.StringFlag{Name: "home", Usage: "the task's home (FM_HOME)"},
			&ucli.StringFlag{Name: "state-dir", Usage: "the task's state directory (FM_STATE_OVERRIDE)"},
			// A hook whose caller reads a failing status as a deny of the
			// user's prompt (gemini, qwen, copilot) asks for exit 0 on
			// anything refused; a refusal is still counted.
			&ucli.BoolFlag{Name: "quiet", Usage: "exit 0 and print nothing, whatever is refused"},
			// Codex appends its notify JSON as one last argument: absorbed
			// unread, it is the harness's own payload, not fmctl's.
			&ucli.StringFlag{Name: "notify-payload", Hidden: true},
		},
		Action: func(_ context.Context, cmd *ucli.Command) error {
			err := runAgentEvent(d, cmd)
			if cmd.Bool("quiet") {
				return nil
			}
			return err
		},
	}, edge.Tasks(d.Tunables.Home), nil)
}

func runAgentEvent(d edge.Deps, cmd *ucli.Command) error {
	a := agentEventArgs{gen: cmd.String("gen"), key: d.Tunables.EventKey}
	if err := a.positional(cmd.Args().Slice()); err != nil {
		return err
	}
	tun := d.Tunables
	if h := cmd.String("home"); h != "" {
		tun.Home.Root, tun.Home.StateOverride = h, cmd.String("state-dir")
	} else if cmd.String("state-dir") != "" {
		return fault.Usage("agent-event takes --state-dir only with --home")
	}
	// A task's own hooks run inside its pane, so the task may report for
	// itself; another task's events are refused here, before the key is
	// even looked at.
	return task.NewAuthority("fm-control", tun, d.Printer(false).Warn).GuardOwn(authority.AgentEvent, a.id, func() error {
		return recordAgentEvent(tun.Home, a, cmd.Args().Slice(), time.Now())
	})
}

// agentEventArgs are the parsed arguments.
type agentEventArgs struct {
	id, event, gen string
	key            string // the event key the caller's environment presents
}

func (a *agentEventArgs) positional(args []string) error {
	if len(args) != 2 {
		return fault.Usage("usage: fm-control agent-event <id> <event> --gen G (events: %s)", strings.Join(state.AgentEventNames(), ", "))
	}
	a.id, a.event = args[0], args[1]
	if a.gen == "" {
		return fault.Usage("agent-event needs --gen (the generation its wiring was installed with)")
	}
	return nil
}

// recordAgentEvent validates and records one event.
func recordAgentEvent(vars config.HomeVars, a agentEventArgs, args []string, now time.Time) error {
	if err := a.positional(args); err != nil {
		return err
	}
	home, err := task.Opener{Tool: "fm-control", Tunables: config.Tunables{Home: vars}}.Begin(a.id)
	if err != nil {
		return err
	}
	activity, ok := state.AgentEventState(a.event)
	if !ok {
		return fault.Usage("'%s' is not an agent event (allowed: %s)", phrase.Printable(a.event), strings.Join(state.AgentEventNames(), ", "))
	}
	store := state.Store{Dir: home.State}
	data, err := state.ReadSmallFile(store.MetaPath(a.id), state.MaxRecordBytes)
	if err != nil {
		return fault.Failed("task %s's record cannot be read (%v); the event was not recorded", a.id, err)
	}
	rec, err := state.ParseRecord(data)
	if err != nil {
		return fault.Failed("task %s's record is malformed (%v); the event was not recorded", a.id, err)
	}
	if rec.SpawnGen() != a.gen {
		return nil // a stale incarnation's late event: the current agent's state stands
	}
	if err := authenticateEvent(store, a, now); err != nil {
		return err
	}
	// The previous report carries the turn on; a race between two
	// events loses only that (an interrupt then waits for a turn it
	// need not), never a state.
	prev, _ := store.ReadAgentState(a.id, a.gen)
	st := prev.Next(activity, a.gen, a.event, rec.Harness(), now)
	if err := state.WriteReport(store.AgentStatePath(a.id), st.Bytes()); err != nil {
		return fault.Failed("task %s's agent state could not be written: %v", a.id, err)
	}
	return nil
}

// authenticateEvent refuses, and counts, an event that does not present the
// current incarnation's key. The generation alone is no proof: it is in the
// record, which every agent of the user can read, so an agent that copied
// another task's hook command line would otherwise report for that task.
func authenticateEvent(store state.Store, a agentEventArgs, now time.Time) error {
	ok, err := store.CheckEventKey(a.id, a.key)
	if ok {
		return nil
	}
	reason, why := "wrong-key", "it presents another key than the task's current one"
	switch {
	case err != nil:
		reason, why = "no-key-file", fmt.Sprintf("the task has no event key to check it against (%v); relaunch the task to mint one", err)
	case a.key == "":
		reason, why = "no-key", harness.EventKeyEnv+" is unset, so the caller is not the task's own agent or a hook it started"
	}
	// The caller's parent is the process that ran the command: the agent
	// or hook runner to look at when the count grows.
	detail := fmt.Sprintf("event=%s reason=%s caller_ppid=%d", phrase.Printable(a.event), reason, os.Getppid())
	counted := ""
	if cerr := store.CountRefusedEvent(a.id, now, detail); cerr != nil {
		counted = fmt.Sprintf(" (and the refusal could not be counted: %v)", cerr)
	}
	return fault.Failed("agent-event %s for task %s refused: %s; nothing was recorded%s", phrase.Printable(a.event), a.id, why, counted).Coded(fault.EEventUnauthenticated)
}
