// Package cliapp holds what the three binaries share at their edge: the
// process dependencies (environment, runner, output streams), the build
// version and the urfave/cli conventions.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	ucli "github.com/urfave/cli/v2"

	"fmctl/backends"
	"fmctl/config"
)

// Version is the build's version when the Makefile sets it with -ldflags
// "-X fmctl/Version=..."; empty, the Go build info decides (see
// BuildVersion).
var Version = ""

// BuildVersion is the version the binaries print: the ldflags value, else
// the module version or VCS revision the Go toolchain stamped into the build,
// so a plain `go build` or `go install` still says what it was built from.
func BuildVersion() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, kv := range info.Settings {
		switch {
		case kv.Key == "vcs.revision":
			rev = kv.Value
		case kv.Key == "vcs.modified" && kv.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return "(devel)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return rev + dirty
}

// Deps are a binary's side-effect edges, injected so tests can fake them.
type Deps struct {
	Env    config.Env
	Runner backends.Runner
	Stdout io.Writer
	Stderr io.Writer
}

// OSDeps are the real process's edges.
func OSDeps() Deps {
	return Deps{Env: os.Getenv, Runner: backends.NewExecRunner(), Stdout: os.Stdout, Stderr: os.Stderr}
}

// Printer returns the outcome printer for the chosen output form.
func (d Deps) Printer(json bool) Printer {
	tty := IsTerminal(d.Stderr) && d.Env("NO_COLOR") == "" && d.Env("TERM") != "dumb"
	return Printer{Out: d.Stdout, Err: d.Stderr, JSON: json, TTY: tty}
}

// Context is cancelled on SIGINT/SIGTERM, so a wait stops promptly.
func Context() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Run runs app and maps its error to an exit code, printing it once.
func Run(app *ucli.App, args []string, d Deps, jsonOut func() bool) int {
	app.Writer = d.Stdout
	app.ErrWriter = d.Stderr
	err := app.Run(args)
	if err == nil || errors.Is(err, errCompletionPrinted) {
		return 0
	}
	if ec, ok := err.(ucli.ExitCoder); ok && ec.Error() == "" {
		return ec.ExitCode()
	}
	return d.Printer(jsonOut()).Error(err)
}

// HasHelp reports whether args ask for help.
func HasHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "--help" {
			return true
		}
	}
	return false
}

// Conventions applies what every binary shares: usage errors exit 2, and
// shell completion is on.
func Conventions(app *ucli.App) {
	app.EnableBashCompletion = true
	app.Flags = append(app.Flags, completionFlag)
	app.Before = printCompletion
	app.OnUsageError = func(c *ucli.Context, err error, isSub bool) error {
		return Usage("%v (see --help)", err)
	}
}

// EndGlobalFlags stops urfave's flag parsing at the task id for a binary whose
// first word is an id (fm-send, fm-spawn): everything from the first word that
// is not one of the binary's global flags is the id and what follows it, so an
// id such as "-rf" reaches the id check instead of the flag parser.
func EndGlobalFlags(args []string) []string {
	if n := len(args); n > 0 && args[n-1] == "--generate-bash-completion" {
		return args
	}
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return args
		case a == "--json", a == "-h", a == "--help", a == "-v", a == "--version", strings.HasPrefix(a, "--completion="):
		case a == "--completion":
			i++
		default:
			return append(append(append([]string(nil), args[:i]...), "--"), args[i:]...)
		}
	}
	return args
}

// FlagValue reads the value of the value flag at args[i], in `--x v` or
// `--x=v` form, and returns the index of the last word it consumed. A
// missing value, one that is itself a flag, or an empty one is an error.
func FlagValue(args []string, i int) (name, value string, last int, err error) {
	name, value, hasValue := strings.Cut(args[i], "=")
	if !hasValue {
		if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
			return name, "", i, fmt.Errorf("%s requires a value", name)
		}
		i++
		value = args[i]
	}
	if value == "" {
		return name, "", i, fmt.Errorf("%s requires a non-empty value", name)
	}
	return name, value, i, nil
}
