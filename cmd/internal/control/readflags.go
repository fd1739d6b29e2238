package control

import (
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/phrase"
	"fmctl/state"
)

// readInvocation is a read-only verb's command line (list, wait, read).
type readInvocation struct {
	ID      string
	JSON    bool
	For     string
	Timeout time.Duration
	Lines   int
	Watch   bool // list --watch
	Follow  bool // read --follow
	// Audit: read prints the task's audit trail instead of its pane.
	Audit bool
	// Record: read prints the conversation from the agent's own record
	// instead of its pane.
	Record bool
	// MessageID is wait --for submitted's message: an id fm-send printed.
	MessageID string
}

const (
	defaultReadLines = 50
	maxReadLines     = 10000
)

// waitConditions are what `wait --for` accepts.
// done waits for the newest turn to end completed, per the agent's own
// record. submitted waits for one fm-send's message (--message-id) to reach the
// agent's own record.
var waitConditions = []string{"ready", "busy", "idle", "waiting", "dead", "done", "submitted"}

// readVerbFlags are each read-only verb's value flags and their help.
var readVerbFlags = map[string][][2]string{
	"wait": {{"for", "the `CONDITION` to wait for: " + strings.Join(waitConditions, ", ")}, {"timeout", "how long to wait, `D` (seconds or a Go duration; else FM_CONTROL_WAIT, else 30s)"}, {"message-id", "with --for submitted: the `ID` fm-send printed (message=...)"}},
	"read": {{"lines", "print the last `N` lines, or --record entries (default 50, at most 10000)"}},
}

// streamFlags are the read-only verbs' switches that keep them printing
// until stopped.
var streamFlags = map[string][2]string{
	"list": {"watch", "print the list again each time it changes, until interrupted (--json: one object a change)"},
	"read": {"follow", "keep printing new lines (or --record entries) until the agent is gone or interrupted"},
}

func readFlags(verb string) []ucli.Flag {
	var fs []ucli.Flag
	for _, f := range readVerbFlags[verb] {
		fs = append(fs, &ucli.StringFlag{Name: f[0], Usage: f[1], Validator: cli.Value(f[0])})
	}
	if f, ok := streamFlags[verb]; ok {
		fs = append(fs, &ucli.BoolFlag{Name: f[0], Usage: f[1]})
	}
	if verb == "read" {
		fs = append(fs, &ucli.BoolFlag{Name: "audit", Usage: "print the task's audit trail (state/<id>.audit) instead of its pane"},
			&ucli.BoolFlag{Name: "record", Usage: "print the conversation from the agent's own record instead of its pane"})
	}
	return fs
}

// parseReadArgs reads a read-only verb's parsed command line. Every mistake
// is a usage error (exit 2): these verbs act on nothing, so there is no
// refusal to make, only a command line to correct.
func parseReadArgs(cmd *ucli.Command, tun config.Tunables) (readInvocation, error) {
	inv := readInvocation{Lines: defaultReadLines, JSON: cmd.Bool("json"), Watch: cmd.Name == "list" && cmd.Bool("watch"), Follow: cmd.Name == "read" && cmd.Bool("follow")}
	if cmd.Name == "list" {
		// A new home's missing state dir is List's to answer (no tasks).
		if _, err := config.LocateHome("fm-control", tun.Home); err != nil {
			return inv, err
		}
		if cmd.NArg() > 0 {
			return inv, fault.Usage("fm-control list takes no task id (it lists every task); got '%s'", phrase.Printable(cmd.Args().First()))
		}
		return inv, nil
	}
	id, err := taskArg(tun.Home, cmd)
	if err != nil {
		return inv, err
	}
	inv.ID = id
	values := map[string]string{}
	for _, f := range readVerbFlags[cmd.Name] {
		if cmd.IsSet(f[0]) {
			values["--"+f[0]] = cmd.String(f[0])
		}
	}
	switch cmd.Name {
	case "wait":
		err = inv.waitFlags(values, tun.Control.Wait)
	case "read":
		inv.Audit, inv.Record = cmd.Bool("audit"), cmd.Bool("record")
		if inv.Audit && inv.Record {
			return inv, fault.Usage("--audit and --record each print something else than the pane; give one")
		}
		if inv.Audit && len(values) > 0 {
			return inv, fault.Usage("--audit prints the whole audit trail; it takes no --lines")
		}
		if inv.Audit && inv.Follow {
			return inv, fault.Usage("--audit prints the audit trail once; it takes no --follow")
		}
		err = inv.readFlags(values)
	}
	return inv, err
}

// waitFlags reads wait's flags; envWait is FM_CONTROL_WAIT, which
// --timeout overrides.
func (inv *readInvocation) waitFlags(values map[string]string, envWait string) error {
	inv.For = values["--for"]
	if inv.For == "" {
		return fault.Usage("fm-control wait needs --for %s", strings.Join(waitConditions, "|"))
	}
	if !validCondition(inv.For) {
		return fault.Usage("--for '%s' is not a condition; use %s", phrase.Printable(inv.For), phrase.OneOf(inv.For, waitConditions))
	}
	if err := inv.messageFlag(values); err != nil {
		return err
	}
	v, refusal := envWait, "FM_CONTROL_WAIT '%s' is %v"
	if t, ok := values["--timeout"]; ok {
		v, refusal = t, "--timeout '%s' is %v"
	}
	if strings.TrimSpace(v) == "" {
		v = config.DefaultTunables().Control.Wait
	}
	d, err := config.ParseWait(v)
	if err != nil {
		return fault.Usage(refusal, phrase.Printable(v), err)
	}
	inv.Timeout = d
	return nil
}

// messageFlag reads --message-id, which --for submitted needs and every
// other condition refuses: a message id says which send to wait for.
func (inv *readInvocation) messageFlag(values map[string]string) error {
	m, ok := values["--message-id"]
	if inv.For != "submitted" {
		if ok {
			return fault.Usage("--message-id goes with --for submitted, not --for %s", inv.For)
		}
		return nil
	}
	if !ok || m == "" {
		return fault.Usage("fm-control wait --for submitted needs --message-id ID").
			Hint("the id is the message= fact of the send's output, such as m20260101T120000-0a1b2c3d")
	}
	if !state.ValidMessageID(m) {
		return fault.Usage("--message-id '%s' is not a message id", phrase.Printable(m)).
			Hint("the id is the message= fact of the send's output, such as m20260101T120000-0a1b2c3d")
	}
	inv.MessageID = m
	return nil
}

func validCondition(c string) bool {
	for _, w := range waitConditions {
		if c == w {
			return true
		}
	}
	return false
}

func (inv *readInvocation) readFlags(values map[string]string) error {
	v, ok := values["--lines"]
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxReadLines {
		return fault.Usage("--lines '%s' is not a line count: give a whole number from 1 to %d", phrase.Printable(v), maxReadLines)
	}
	inv.Lines = n
	return nil
}
