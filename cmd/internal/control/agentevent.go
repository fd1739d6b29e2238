package control

import (
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"fmctl/cmd/internal/cli"
	"fmctl/config"
	"fmctl/state"
)

// agentEventCommand is the one entry point the harnesses' hooks, notify
// programs, plugins and extensions call (fm-spawn wires them). It is not a
// lifecycle verb: it never touches the pane, takes no lock and makes no
// multiplexer call, because a hook runs on every prompt and must never
// block the agent. It only records what the agent said about itself.
func agentEventCommand(d cli.Deps) *ucli.Command {
	return &ucli.Command{
		Name:      "agent-event",
		Hidden:    true,
		Usage:     "record an agent's own lifecycle event (called by the wiring fm-spawn installs)",
		UsageText: "fm-control agent-event <id> <event> --gen G",
		Description: `Writes state/<id>.agent-state atomically when G is the record's current
spawn_gen; an older incarnation's event is ignored (exit 0, nothing written).
Events: ` + strings.Join(state.AgentEventNames(), ", ") + `.`,
		SkipFlagParsing: true,
		HideHelpCommand: true,
		Action: func(c *ucli.Context) error {
			return RecordAgentEvent(d.Env, c.Args().Slice(), time.Now())
		},
	}
}

// agentEventArgs are the parsed arguments. Codex appends its notify JSON as
// one last argument, which --notify-payload absorbs unread.
type agentEventArgs struct {
	id, event, gen string
}

func parseAgentEventArgs(args []string) (agentEventArgs, error) {
	var a agentEventArgs
	var pos []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--gen":
			if i+1 >= len(args) {
				return a, cli.Usage("--gen needs a value")
			}
			a.gen = args[i+1]
			i++
		case "--notify-payload":
			i++ // the harness's own payload: not fmctl's to interpret
		default:
			if strings.HasPrefix(args[i], "-") {
				return a, cli.Usage("agent-event does not take '%s'", state.Printable(args[i]))
			}
			pos = append(pos, args[i])
		}
	}
	if len(pos) != 2 {
		return a, cli.Usage("usage: fm-control agent-event <id> <event> --gen G (events: %s)", strings.Join(state.AgentEventNames(), ", "))
	}
	a.id, a.event = pos[0], pos[1]
	if a.gen == "" {
		return a, cli.Usage("agent-event needs --gen (the generation its wiring was installed with)")
	}
	return a, nil
}

// RecordAgentEvent validates and records one event.
func RecordAgentEvent(env config.Env, args []string, now time.Time) error {
	a, err := parseAgentEventArgs(args)
	if err != nil {
		return err
	}
	home, err := config.ResolveHome("fm-control", env)
	if err != nil {
		return err
	}
	if err := state.CheckTaskArg("fm-control", a.id); err != nil {
		return err
	}
	activity, ok := state.AgentEventState(a.event)
	if !ok {
		return cli.Usage("'%s' is not an agent event (allowed: %s)", state.Printable(a.event), strings.Join(state.AgentEventNames(), ", "))
	}
	store := state.Store{Dir: home.State}
	data, err := state.ReadSmallFile(store.MetaPath(a.id), state.MaxRecordBytes)
	if err != nil {
		return cli.Failed("task %s's record cannot be read (%v); the event was not recorded", a.id, err)
	}
	rec, err := state.ParseRecord(data)
	if err != nil {
		return cli.Failed("task %s's record is malformed (%v); the event was not recorded", a.id, err)
	}
	if rec.Get("spawn_gen") != a.gen {
		return nil // a stale incarnation's late event: the current agent's state stands
	}
	st := state.AgentState{State: activity, Gen: a.gen, Event: a.event, At: now, Harness: rec.Get("harness")}
	if err := state.WriteAtomic(store.AgentStatePath(a.id), st.Bytes()); err != nil {
		return cli.Failed("task %s's agent state could not be written: %v", a.id, err)
	}
	return nil
}
