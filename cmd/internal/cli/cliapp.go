// Package cliapp holds what the four binaries share at their edge: the
// process dependencies (environment, runner, output streams), the build
// version and the urfave/cli conventions.
package cli

import (
	"io"
	"os"
	"runtime/debug"

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
	// Env reads the context the binary runs in (TMUX, HERDR_ENV, NO_COLOR);
	// the FM_* variables are read once, into Tunables.
	Env      config.Env
	Tunables config.Tunables
	Runner   backends.Runner
	Stdout   io.Writer
	Stderr   io.Writer
	// Output is filled by Run from the command line's --json field list
	// or --jq before the command runs; every printer of the run shares it.
	Output *Output
}

// OSDeps are the real process's edges, and its FM_* variables read once.
func OSDeps() Deps {
	tun := config.ReadTunables(os.Getenv)
	return Deps{Env: os.Getenv, Tunables: tun, Runner: backends.NewExecRunner(tun.RunnerTrace), Stdout: os.Stdout, Stderr: os.Stderr, Output: &Output{}}
}

// Printer returns the outcome printer for the chosen output form.
func (d Deps) Printer(json bool) Printer {
	tty := IsTerminal(d.Stderr) && d.Env("NO_COLOR") == "" && d.Env("TERM") != "dumb"
	return Printer{Out: d.Stdout, Err: d.Stderr, JSON: json, TTY: tty, OutTTY: IsTerminal(d.Stdout), Output: d.Output}
}
