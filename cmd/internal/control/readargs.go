package control

import (
	"strconv"
	"strings"
	"time"

	"fmctl/cmd/internal/cli"
	"fmctl/config"
	"fmctl/state"
)

// readInvocation is a parsed read-only verb command line (list, wait, read).
type readInvocation struct {
	ID      string
	JSON    bool
	Help    bool
	For     string
	Timeout time.Duration
	Lines   int
}

const (
	defaultReadLines = 50
	maxReadLines     = 10000
	defaultWait      = 30 * time.Second
)

// waitConditions are what `wait --for` accepts.
var waitConditions = []string{"ready", "busy", "idle", "waiting", "dead"}

// readVerbFlags lists the value flags each read-only verb takes.
var readVerbFlags = map[string][]string{
	"list": nil,
	"wait": {"--for", "--timeout"},
	"read": {"--lines"},
}

// parseReadArgs reads `[<id>] [flags]` for a read-only verb. Every mistake
// is a usage error (exit 2): these verbs act on nothing, so there is no
// refusal to make, only a command line to correct.
func parseReadArgs(verb string, args []string, env config.Env) (readInvocation, error) {
	inv := readInvocation{Lines: defaultReadLines}
	values := map[string]string{}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
			continue
		case a == "--json":
			inv.JSON = true
			continue
		case a == "-h" || a == "--help":
			inv.Help = true
			continue
		case !strings.HasPrefix(a, "-"):
			positional = append(positional, a)
			continue
		}
		name, _, _ := strings.Cut(a, "=")
		if !takesFlag(verb, name) {
			return inv, cli.Usage("unexpected argument '%s': fm-control %s takes no such flag (see fm-control %s --help)", state.Printable(a), verb, verb)
		}
		name, value, last, err := cli.FlagValue(args, i)
		if err != nil {
			return inv, cli.Usage("%v", err)
		}
		i = last
		values[name] = value
	}
	if inv.Help {
		return inv, nil
	}
	if verb == "list" {
		if len(positional) > 0 {
			return inv, cli.Usage("fm-control list takes no task id (it lists every task); got '%s'", state.Printable(positional[0]))
		}
		return inv, nil
	}
	switch len(positional) {
	case 0:
		return inv, cli.Usage("fm-control %s needs a task id: fm-control %s %s", verb, verb, readSynopsis[verb])
	case 1:
		inv.ID = positional[0]
	default:
		return inv, cli.Usage("unexpected argument '%s'", state.Printable(positional[1]))
	}
	var err error
	switch verb {
	case "wait":
		err = inv.waitFlags(values, env)
	case "read":
		err = inv.readFlags(values)
	}
	return inv, err
}

func takesFlag(verb, name string) bool {
	for _, f := range readVerbFlags[verb] {
		if f == name {
			return true
		}
	}
	return false
}

func (inv *readInvocation) waitFlags(values map[string]string, env config.Env) error {
	inv.For = values["--for"]
	if inv.For == "" {
		return cli.Usage("fm-control wait needs --for %s", strings.Join(waitConditions, "|"))
	}
	if !validCondition(inv.For) {
		return cli.Usage("--for '%s' is not a condition; use one of %s", state.Printable(inv.For), strings.Join(waitConditions, ", "))
	}
	inv.Timeout = defaultWait
	source, v := "FM_CONTROL_WAIT", env("FM_CONTROL_WAIT")
	if t, ok := values["--timeout"]; ok {
		source, v = "--timeout", t
	}
	if strings.TrimSpace(v) == "" {
		return nil
	}
	d, err := config.ParseWait(v)
	if err != nil {
		return cli.Usage("%s '%s' is %v", source, state.Printable(v), err)
	}
	inv.Timeout = d
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
		return cli.Usage("--lines '%s' is not a line count: give a whole number from 1 to %d", state.Printable(v), maxReadLines)
	}
	inv.Lines = n
	return nil
}
