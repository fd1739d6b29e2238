// Package zellijfake is a stand-in for the zellij CLI (0.44 surface) that
// keeps its server state in files, so fmctl's zellij adapter and testscript
// suites can run where zellij cannot be installed.
//
// It implements the commands fmctl uses, with zellij's own syntax and output
// shapes, and rejects everything else with a non-zero exit and a message on
// stderr, so a typo in the adapter fails its tests:
//
//	zellij [--session S] action paste [--pane-id P] [--] CHARS
//	zellij [--session S] action write-chars [--pane-id P] [--] CHARS
//	zellij [--session S] action send-keys [--pane-id P] KEY...
//	zellij [--session S] action dump-screen [--pane-id P] [--full] [--ansi] [--path FILE]
//	zellij [--session S] action list-panes [--json] [-t|-c|-s|-g|-a]
//	zellij [--session S] action list-tabs [--json] [-s|-d|-p|-l|-a]
//	zellij [--session S] action new-tab [--name N] [--cwd DIR]
//	zellij [--session S] action go-to-tab-by-id ID
//	zellij [--session S] action close-tab-by-id ID
//	zellij [--session S] action close-pane --pane-id P
//	zellij attach -b S
//	zellij list-sessions [--short] [--no-formatting] [--reverse]
//
// Like zellij 0.44, an action against a missing pane does nothing and exits
// 0, and an action against a missing session exits 1 when at most one session
// runs but prints the session list and exits 0 when several do
// (send_action_to_session in src/commands.rs). Input without --pane-id is
// dropped, as it is in a fresh real session whose focused pane is the
// release-notes plugin.
//
// State lives under $FAKE_ZELLIJ_DIR: state.json (sessions, tabs, panes with
// their foreground command, composer and transcript), input.log (one line per
// delivered input: `text <Go %q>` or `key <key as given>`), calls.log (every
// invocation's argv). The control files never-dies, interrupt-stops and stuck
// change the emulated agent (see agent.go).
package zellijfake

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Main runs the fake with the process's arguments and environment.
func Main() int {
	return run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
}

// invocation is one run: its I/O, its state directory and the loaded world.
type invocation struct {
	dir            string
	getenv         func(string) string
	stdout, stderr io.Writer
	w              *world
	dirty          bool
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	dir := getenv("FAKE_ZELLIJ_DIR")
	if dir == "" {
		fmt.Fprintln(stderr, "fake zellij: FAKE_ZELLIJ_DIR is not set")
		return 2
	}
	unlock, err := lockDir(dir)
	if err != nil {
		fmt.Fprintf(stderr, "fake zellij: lock %s: %v\n", dir, err)
		return 2
	}
	defer unlock()
	if err := appendLine(dir, "calls.log", argvLine(args)); err != nil {
		fmt.Fprintf(stderr, "fake zellij: %v\n", err)
		return 2
	}
	w, err := loadWorld(dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	inv := &invocation{dir: dir, getenv: getenv, stdout: stdout, stderr: stderr, w: w}
	code := inv.dispatch(args)
	if inv.dirty {
		if err := saveWorld(dir, w); err != nil {
			fmt.Fprintf(stderr, "fake zellij: save state: %v\n", err)
			return 2
		}
	}
	return code
}

// argvLine writes argv so a test can grep it: words are plain unless they
// need quoting, then Go-quoted.
func argvLine(args []string) string {
	words := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\r\"'\\") || strconv.Quote(a) != `"`+a+`"` {
			words[i] = strconv.Quote(a)
		} else {
			words[i] = a
		}
	}
	return strings.Join(words, " ")
}

func (inv *invocation) fail(code int, format string, a ...any) int {
	fmt.Fprintf(inv.stderr, format+"\n", a...)
	return code
}

// dispatch parses zellij's global options, then the subcommand.
func (inv *invocation) dispatch(args []string) int {
	var sessionName string
	var hasSession bool
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		a := args[i]
		switch {
		case a == "--session" || a == "-s":
			if i+1 >= len(args) {
				return inv.fail(2, "error: The argument '--session <SESSION>' requires a value but none was supplied")
			}
			i++
			sessionName, hasSession = args[i], true
		case strings.HasPrefix(a, "--session="):
			sessionName, hasSession = strings.TrimPrefix(a, "--session="), true
		default:
			return inv.fail(2, "%s", unexpected(a).Error())
		}
	}
	if i >= len(args) {
		return inv.fail(2, "fake zellij: starting an interactive session is not emulated; name a subcommand")
	}
	sub, rest := args[i], args[i+1:]
	if full, ok := subcommandAliases[sub]; ok {
		sub = full
	}
	switch sub {
	case "action":
		return inv.action(sessionName, hasSession, rest)
	case "attach":
		return inv.attach(rest)
	case "list-sessions":
		return inv.listSessions(rest)
	}
	return inv.fail(2, "error: The subcommand '%s' wasn't recognized", sub)
}

func (inv *invocation) attach(args []string) int {
	p, err := attachSpec.parse(args)
	if err != nil {
		return inv.fail(2, "%s", err)
	}
	if !p.has("create-background") {
		return inv.fail(2, "fake zellij: attach without --create-background needs a terminal; not emulated")
	}
	name := p.pos[0]
	if inv.w.session(name) != nil {
		return inv.fail(1, "Session already exists")
	}
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "/"
	}
	inv.w.newSession(name, cwd)
	inv.dirty = true
	return 0
}

func (inv *invocation) listSessions(args []string) int {
	p, err := listSessionsSpec.parse(args)
	if err != nil {
		return inv.fail(2, "%s", err)
	}
	names := inv.w.names()
	if len(names) == 0 {
		return inv.fail(1, "No active zellij sessions found.")
	}
	fmt.Fprintln(inv.stdout, sessionList(names, p.has("no-formatting"), p.has("short"), p.has("reverse"), inv.getenv("ZELLIJ_SESSION_NAME")))
	return 0
}

// resolveSession mirrors send_action_to_session: it returns the session to
// act on, or the exit code zellij would end with.
func (inv *invocation) resolveSession(name string, given bool) (*session, int) {
	names := inv.w.names()
	list := func() {
		fmt.Fprintln(inv.stdout, sessionList(names, false, false, true, inv.getenv("ZELLIJ_SESSION_NAME")))
	}
	switch {
	case len(names) == 0:
		return nil, inv.fail(1, "There is no active session!")
	case len(names) == 1:
		if given && name != names[0] {
			return nil, inv.fail(1, "Session '%s' not found. The following sessions are active:\n%s", name, names[0])
		}
		return inv.w.Sessions[0], 0
	}
	if !given {
		name = inv.getenv("ZELLIJ_SESSION_NAME")
		if name == "" {
			fmt.Fprintln(inv.stderr, "Please specify the session name to send actions to. The following sessions are active:")
			list()
			// zellij's list_sessions exits 0 before the exit(1) that follows it.
			return nil, 0
		}
	}
	if s := inv.w.session(name); s != nil {
		return s, 0
	}
	fmt.Fprintf(inv.stderr, "Session '%s' not found. The following sessions are active:\n", name)
	list()
	return nil, 0
}
