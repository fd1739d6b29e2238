package zellijfake

import (
	"fmt"
	"strings"
)

// flagSpec is one option of a real zellij (sub)command. Options the real CLI
// has but this fake does not emulate are listed with fake=false, so using one
// fails loudly instead of being silently ignored.
type flagSpec struct {
	long  string
	short byte // 0: no short form
	value bool // takes a value
	fake  bool // emulated here
}

// cmdSpec is the argument grammar of one subcommand, as zellij 0.44's clap
// definitions (zellij-utils/src/cli.rs) declare it.
type cmdSpec struct {
	flags  []flagSpec
	minPos int
	maxPos int    // -1: unlimited
	pos    string // positional name for error messages
}

type parsedArgs struct {
	flags map[string]string // long name -> value ("" for a switch)
	pos   []string
}

func (p parsedArgs) has(long string) bool { _, ok := p.flags[long]; return ok }

// usageError is a clap-style rejection: zellij exits 2 for these.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func unexpected(arg string) error {
	return &usageError{fmt.Sprintf("error: Found argument '%s' which wasn't expected, or isn't valid in this context", arg)}
}

func (s cmdSpec) lookup(arg string) (flagSpec, bool) {
	for _, f := range s.flags {
		if strings.HasPrefix(arg, "--") && arg[2:] == f.long {
			return f, true
		}
		if f.short != 0 && len(arg) == 2 && arg[0] == '-' && arg[1] == f.short {
			return f, true
		}
	}
	return flagSpec{}, false
}

// parse reads args the way clap does for the subset zellij's action
// subcommands use: --long, --long=value, --long value, -s value, and "--"
// ending the options.
func (s cmdSpec) parse(args []string) (parsedArgs, error) {
	p := parsedArgs{flags: map[string]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.pos = append(p.pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			p.pos = append(p.pos, a)
			continue
		}
		name, val, hasVal := a, "", false
		if strings.HasPrefix(a, "--") {
			name, val, hasVal = strings.Cut(a, "=")
		}
		f, ok := s.lookup(name)
		if !ok {
			return p, unexpected(a)
		}
		if !f.fake {
			return p, &usageError{fmt.Sprintf("fake zellij: --%s is a real zellij option this fake does not emulate", f.long)}
		}
		if _, dup := p.flags[f.long]; dup {
			return p, &usageError{fmt.Sprintf("error: The argument '--%s' was provided more than once, but cannot be used multiple times", f.long)}
		}
		switch {
		case f.value && hasVal:
		case f.value:
			if i+1 >= len(args) {
				return p, &usageError{fmt.Sprintf("error: The argument '--%s <%s>' requires a value but none was supplied", f.long, strings.ToUpper(f.long))}
			}
			i++
			val = args[i]
		case hasVal:
			return p, unexpected(a)
		}
		p.flags[f.long] = val
	}
	if len(p.pos) < s.minPos {
		return p, &usageError{fmt.Sprintf("error: The following required arguments were not provided:\n    <%s>", s.pos)}
	}
	if s.maxPos >= 0 && len(p.pos) > s.maxPos {
		return p, unexpected(p.pos[s.maxPos])
	}
	return p, nil
}

var paneIDFlag = flagSpec{long: "pane-id", short: 'p', value: true, fake: true}

// actionSpecs lists the `zellij action` subcommands this fake emulates, with
// every option zellij 0.44.0 declares for them.
var actionSpecs = map[string]cmdSpec{
	"paste":       {flags: []flagSpec{paneIDFlag}, minPos: 1, maxPos: 1, pos: "CHARS"},
	"write-chars": {flags: []flagSpec{paneIDFlag}, minPos: 1, maxPos: 1, pos: "CHARS"},
	"send-keys":   {flags: []flagSpec{paneIDFlag}, minPos: 1, maxPos: -1, pos: "KEYS>..."},
	"dump-screen": {flags: []flagSpec{
		{long: "path", value: true, fake: true},
		{long: "full", short: 'f', fake: true},
		paneIDFlag,
		{long: "ansi", short: 'a', fake: true},
	}, maxPos: 0},
	"list-panes": {flags: []flagSpec{
		{long: "tab", short: 't', fake: true},
		{long: "command", short: 'c', fake: true},
		{long: "state", short: 's', fake: true},
		{long: "geometry", short: 'g', fake: true},
		{long: "all", short: 'a', fake: true},
		{long: "json", short: 'j', fake: true},
	}, maxPos: 0},
	"list-tabs": {flags: []flagSpec{
		{long: "state", short: 's', fake: true},
		{long: "dimensions", short: 'd', fake: true},
		{long: "panes", short: 'p', fake: true},
		{long: "layout", short: 'l', fake: true},
		{long: "all", short: 'a', fake: true},
		{long: "json", short: 'j', fake: true},
	}, maxPos: 0},
	"new-tab": {flags: []flagSpec{
		{long: "layout", short: 'l', value: true},
		{long: "layout-dir", value: true},
		{long: "name", short: 'n', value: true, fake: true},
		{long: "cwd", short: 'c', value: true, fake: true},
		{long: "initial-plugin", value: true},
		{long: "close-on-exit"},
		{long: "start-suspended"},
		{long: "block-until-exit-success"},
		{long: "block-until-exit-failure"},
		{long: "block-until-exit"},
	}, maxPos: 0, pos: "INITIAL_COMMAND"},
	"go-to-tab-by-id": {minPos: 1, maxPos: 1, pos: "ID"},
	"close-tab-by-id": {minPos: 1, maxPos: 1, pos: "ID"},
	"close-pane":      {flags: []flagSpec{paneIDFlag}, maxPos: 0},
}

var listSessionsSpec = cmdSpec{flags: []flagSpec{
	{long: "no-formatting", short: 'n', fake: true},
	{long: "short", short: 's', fake: true},
	{long: "reverse", short: 'r', fake: true},
}, maxPos: 0}

var attachSpec = cmdSpec{flags: []flagSpec{
	{long: "create", short: 'c'},
	{long: "create-background", short: 'b', fake: true},
	{long: "index", value: true},
	{long: "force-run-commands", short: 'f'},
	{long: "token", short: 't', value: true},
	{long: "remember", short: 'r'},
	{long: "forget"},
	{long: "ca-cert", value: true},
	{long: "insecure"},
}, minPos: 1, maxPos: 1, pos: "SESSION_NAME"}

// subcommandAliases are the clap visible aliases of the top-level subcommands.
var subcommandAliases = map[string]string{"ac": "action", "a": "attach", "ls": "list-sessions"}
