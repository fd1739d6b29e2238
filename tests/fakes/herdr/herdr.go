// Package herdrfake is a stand-in for the herdr CLI (ogulcancelik/herdr,
// v0.7.1, protocol 14) for tests: herdr cannot be installed on the machines
// fmctl is tested on. It implements the commands fmctl's herdr adapter uses,
// with the real CLI's argument syntax, JSON shapes, error codes and exit
// codes, and rejects everything else: an unknown command or option fails the
// way the real binary fails, and a real command the fake does not emulate
// fails with exit 3 and says so, so a typo in the adapter fails its tests.
//
// Implemented: the global --session NAME / --session=NAME (anywhere before a
// "--", else $HERDR_SESSION, else "default"); status --json; workspace list,
// workspace create; tab list, tab create, tab rename; pane list, pane get, pane read,
// pane send-text, pane send-keys, pane run, pane close; agent get.
//
// State lives in $FAKE_HERDR_DIR/state.json (under an flock). Logs:
//
//	calls.log  every invocation's argv, one line each
//	input.log  every input delivered to a pane: `text <%q>` or `key <name as given>`
//
// Switch files in $FAKE_HERDR_DIR change behaviour:
//
//	no-server        the session's server is not running (every line a session
//	                 name; an empty file means every session)
//	busy             agent get reports a running agent as working, not idle
//	stuck            Enter is swallowed: the composer is never cleared
//	never-dies       /exit and /quit do not end an agent
//	interrupt-stops  Escape or Ctrl+C ends a running agent
//
// Environment: FAKE_HERDR_VERSION (default 0.7.1) and FAKE_HERDR_PROTOCOL
// (default 14) are what status --json reports.
//
// Agent emulation: a pane starts running bash. Typed text goes to its
// composer; Enter submits it. In a shell a submitted line can `cd DIR` or
// launch an agent (its first word, after NAME=value words and `env -u NAME`,
// has the basename of a known harness); in an agent, /exit or /quit returns to
// bash. `pane read` draws the transcript with the composer as the last row,
// `> <composer>`.
package herdrfake

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Main runs one fake herdr invocation from os.Args and the environment and
// returns its exit code; it never calls os.Exit, so it can be registered as a
// testscript command.
func Main() int {
	return Run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
}

// Run is Main with its inputs passed in.
func Run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	dir := getenv("FAKE_HERDR_DIR")
	if dir == "" {
		fmt.Fprintln(stderr, "fake herdr: FAKE_HERDR_DIR is not set")
		return 2
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "fake herdr: %v\n", err)
		return 2
	}
	unlock, err := lockDir(dir)
	if err != nil {
		fmt.Fprintf(stderr, "fake herdr: lock %s: %v\n", dir, err)
		return 2
	}
	defer unlock()
	f := &fake{dir: dir, env: getenv, stdout: stdout, stderr: stderr}
	f.log("calls.log", formatArgv(args))
	st, err := LoadState(dir)
	if err != nil {
		fmt.Fprintf(stderr, "fake herdr: %v\n", err)
		return 2
	}
	f.state = st
	code := f.main(args)
	if f.dirty {
		if err := saveState(dir, st); err != nil {
			fmt.Fprintf(stderr, "fake herdr: save state: %v\n", err)
			return 2
		}
	}
	return code
}

type fake struct {
	dir            string
	env            func(string) string
	stdout, stderr io.Writer
	session        string // "default" or a validated session name
	state          *State
	dirty          bool
}

func (f *fake) log(file, line string) {
	fh, err := os.OpenFile(filepath.Join(f.dir, file), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer fh.Close()
	fh.Write([]byte(line + "\n"))
}

// formatArgv renders an argv readably: plain words bare, anything else quoted.
func formatArgv(args []string) string {
	parts := []string{"herdr"}
	for _, a := range args {
		if a != "" && !strings.ContainsFunc(a, func(r rune) bool { return r <= ' ' || r == '"' || r == '\'' || r == '\\' || r == 0x7f }) {
			parts = append(parts, a)
		} else {
			parts = append(parts, fmt.Sprintf("%q", a))
		}
	}
	return strings.Join(parts, " ")
}

// realTopLevel are herdr 0.7.1's CLI commands (src/cli.rs maybe_run and the
// launcher in src/main.rs). The ones the fake does not emulate fail with exit 3.
var realTopLevel = map[string]bool{
	"server": true, "status": true, "config": true, "channel": true, "workspace": true,
	"worktree": true, "tab": true, "notification": true, "agent": true, "terminal": true,
	"pane": true, "plugin": true, "wait": true, "integration": true, "session": true,
	"update": true, "client": true, "remote-client-bridge": true,
}

// realLauncherFlags are the options herdr's launcher knows (src/main.rs).
var realLauncherFlags = map[string]bool{
	"--no-session": true, "--version": true, "-V": true, "--default-config": true, "--help": true, "-h": true,
}

func (f *fake) main(args []string) int {
	args, code := f.globalFlags(args)
	if code >= 0 {
		return code
	}
	if len(args) == 0 {
		return f.notEmulated("herdr (launching the client)")
	}
	switch args[0] {
	case "status":
		return f.status(args[1:])
	case "workspace":
		return f.workspaceCmd(args[1:])
	case "tab":
		return f.tabCmd(args[1:])
	case "pane":
		return f.paneCmd(args[1:])
	case "agent":
		return f.agentCmd(args[1:])
	}
	if realTopLevel[args[0]] {
		return f.notEmulated("herdr " + args[0])
	}
	// Anything else falls through to the real launcher, which rejects it.
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if strings.HasPrefix(a, "-") && !realLauncherFlags[name] {
			fmt.Fprintf(f.stderr, "unknown option: %s\nrun 'herdr --help' for usage\n", a)
			return 1
		}
		if !strings.HasPrefix(a, "-") && !realTopLevel[a] {
			fmt.Fprintf(f.stderr, "unknown command: %s\nrun 'herdr --help' for usage\n", a)
			return 1
		}
	}
	return f.notEmulated("herdr " + strings.Join(args, " "))
}

// globalFlags strips --session and the --remote family the way herdr's
// session::configure_from_args and remote::extract_remote_args do: anywhere
// before a "--", last --session wins. It returns an exit code >= 0 on error.
func (f *fake) globalFlags(args []string) ([]string, int) {
	var out []string
	requested, haveRequested := "", false
	remote, remoteKeys, handoff := false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			out = append(out, args[i:]...)
			i = len(args)
		case a == "--session":
			if i+1 >= len(args) {
				return nil, f.launcherError("missing value for --session")
			}
			requested, haveRequested = args[i+1], true
			i++
		case strings.HasPrefix(a, "--session="):
			requested, haveRequested = strings.TrimPrefix(a, "--session="), true
		case a == "--remote" || strings.HasPrefix(a, "--remote="):
			if a == "--remote" {
				if i+1 >= len(args) {
					return nil, f.launcherError("missing value for --remote")
				}
				i++
			}
			remote = true
		case a == "--remote-keybindings" || strings.HasPrefix(a, "--remote-keybindings="):
			if a == "--remote-keybindings" {
				if i+1 >= len(args) {
					return nil, f.launcherError("missing value for --remote-keybindings")
				}
				i++
			}
			remoteKeys = true
		case a == "--handoff":
			handoff = true
		default:
			out = append(out, a)
		}
	}
	name := "default"
	if haveRequested {
		name = requested
	} else if env := f.env("HERDR_SESSION"); env != "" {
		name = env
	}
	if name != "default" {
		if msg := validateSessionName(name); msg != "" {
			return nil, f.launcherError(msg)
		}
	}
	f.session = name
	switch {
	case remoteKeys && !remote:
		return nil, f.launcherError("--remote-keybindings requires --remote")
	case remote && len(out) > 0:
		return nil, f.launcherError("--remote can only be used with the default launch command")
	case remote:
		return nil, f.notEmulated("herdr --remote")
	}
	if handoff {
		out = append(out, "--handoff")
	}
	return out, -1
}

func (f *fake) launcherError(msg string) int {
	fmt.Fprintf(f.stderr, "error: %s\nrun 'herdr --help' for usage\n", msg)
	return 2
}

// validateSessionName is herdr's session::validate_name.
func validateSessionName(name string) string {
	switch {
	case name == "":
		return "session name cannot be empty"
	case len(name) > 64:
		return "session name cannot be longer than 64 bytes"
	case name == "." || name == "..":
		return "session name cannot be . or .."
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return "session name may only contain ASCII letters, numbers, '.', '_' and '-'"
		}
	}
	return ""
}

func (f *fake) notEmulated(what string) int {
	fmt.Fprintf(f.stderr, "fake herdr: `%s` exists in the real CLI but this fake does not emulate it\n", what)
	return 3
}

// usage is a CLI usage error: herdr prints it and exits 2.
func (f *fake) usage(msg string) int {
	fmt.Fprintln(f.stderr, msg)
	return 2
}

// ioError is how herdr's main reports an io::Error (Rust's Debug of it on
// stderr, exit 1): a missing server socket, or an invalid flag value.
func (f *fake) ioError(debug string) int {
	fmt.Fprintf(f.stderr, "Error: %s\n", debug)
	return 1
}

// connect is the CLI reaching the session's server socket.
func (f *fake) connect() bool {
	if f.serverRunning() {
		return true
	}
	f.ioError(`Os { code: 2, kind: NotFound, message: "No such file or directory" }`)
	return false
}

func (f *fake) serverRunning() bool {
	b, err := os.ReadFile(filepath.Join(f.dir, "no-server"))
	if err != nil {
		return true
	}
	names := strings.Fields(string(b))
	if len(names) == 0 {
		return false
	}
	for _, n := range names {
		if n == f.session {
			return false
		}
	}
	return true
}

// respond prints a success response the way herdr's print_response does.
func (f *fake) respond(id string, result any) int {
	b, _ := json.Marshal(struct {
		ID     string `json:"id"`
		Result any    `json:"result"`
	}{id, result})
	fmt.Fprintln(f.stdout, string(b))
	return 0
}

// apiError prints a server error response: the whole response on stderr, exit 1.
func (f *fake) apiError(id, code, message string) int {
	b, _ := json.Marshal(struct {
		ID    string    `json:"id"`
		Error errorBody `json:"error"`
	}{id, errorBody{code, message}})
	fmt.Fprintln(f.stderr, string(b))
	return 1
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// subcommand dispatches a command group: implemented handlers run, real but
// unemulated subcommands exit 3, anything else prints the group's help (exit 2).
func (f *fake) subcommand(group string, args []string, real []string, impl map[string]func([]string) int) int {
	if len(args) == 0 {
		return f.groupHelp(group, real, 2)
	}
	if h, ok := impl[args[0]]; ok {
		return h(args[1:])
	}
	switch args[0] {
	case "help", "--help", "-h":
		return f.groupHelp(group, real, 0)
	}
	for _, r := range real {
		if r == args[0] {
			return f.notEmulated("herdr " + group + " " + args[0])
		}
	}
	return f.groupHelp(group, real, 2)
}

func (f *fake) groupHelp(group string, real []string, code int) int {
	fmt.Fprintf(f.stderr, "herdr %s commands:\n", group)
	for _, r := range real {
		fmt.Fprintf(f.stderr, "  herdr %s %s\n", group, r)
	}
	return code
}
