// Package cli is the binaries' shared presentation: the urfave/cli
// conventions, the exit-code table, and the printer that writes outcomes
// and a fault as one `error:` line and `hint:` lines (or one JSON object).
// It knows no backend, record or configuration: what it needs of the
// process comes in an IO.
package cli

import (
	"io"
	"runtime/debug"
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

// IO is what the CLI conventions need of the process: the context it runs
// in (NO_COLOR, TERM), its output streams, the command line's output
// selection, and whether the shell's completion script is asking. The
// binary's package builds it from its edge (cmd/internal/edge.Deps.IO).
type IO struct {
	Env    func(string) string
	Stdout io.Writer
	Stderr io.Writer
	// Output is filled by Run from the command line's --json field list
	// or --jq before the command runs; every printer of the run shares it.
	Output *Output
	// Completing: the completion scripts set CompletionVar, so the last
	// word --generate-shell-completion asks for completions.
	Completing    bool
	CompletionVar string
	// Refused is what is wrong with the process's environment (an FM_*
	// variable's value its unit refuses), found before the command line
	// is read: every command stops on it, as the usage error it is,
	// before it acts; --help, --version and completion still answer.
	Refused error
}

// Printer returns the outcome printer for the chosen output form.
func (d IO) Printer(json bool) Printer {
	tty := IsTerminal(d.Stderr) && d.Env("NO_COLOR") == "" && d.Env("TERM") != "dumb"
	return Printer{Out: d.Stdout, Err: d.Stderr, JSON: json, TTY: tty, OutTTY: IsTerminal(d.Stdout), Width: ReadableWidth(TerminalWidth(d.Stdout)), Output: d.Output}
}
