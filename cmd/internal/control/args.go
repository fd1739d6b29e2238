package control

import (
	"os"
	"strings"

	"fmctl/cmd/internal/cli"
	"fmctl/harness"
	"fmctl/state"
)

// RelaunchOptions are relaunch's flags.
type RelaunchOptions struct {
	Harness, Model, Effort string
	Note                   string
	NoteSet                bool
	NoteFile               string
}

// invocation is one parsed lifecycle command line.
type invocation struct {
	ID   string
	JSON bool
	Help bool
	Opts RelaunchOptions
	// relaunchOnly records whether any relaunch-only flag was given.
	relaunchOnly bool
}

// parseVerbArgs reads `<id> [flags]`, flags in `--x v` or `--x=v` form, in
// any position. Errors are exit 1, as the original's flag errors were.
func parseVerbArgs(args []string) (invocation, error) {
	var inv invocation
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		switch a {
		case "--json":
			inv.JSON = true
			continue
		case "-h", "--help":
			inv.Help = true
			continue
		}
		flagName, _, _ := strings.Cut(a, "=")
		target := inv.flagTarget(flagName)
		if target == nil {
			if strings.HasPrefix(a, "-") {
				return inv, cli.Failed("unexpected argument '%s'", state.Printable(a))
			}
			positional = append(positional, a)
			continue
		}
		name, value, last, err := cli.FlagValue(args, i)
		if err != nil {
			return inv, cli.Failed("%v", err)
		}
		i = last
		*target = value
		inv.relaunchOnly = true
		if name == "--note" {
			inv.Opts.NoteSet = true
		}
	}
	if len(positional) == 0 {
		return inv, nil
	}
	if len(positional) > 1 {
		return inv, cli.Failed("unexpected argument '%s'", state.Printable(positional[1]))
	}
	inv.ID = positional[0]
	if e := inv.Opts.Effort; e != "" && !harness.ValidEffort(e) {
		return inv, cli.Failed("--effort must be one of %s", strings.Join(harness.Efforts, ", "))
	}
	if inv.Opts.NoteSet && inv.Opts.NoteFile != "" {
		return inv, cli.Failed("pass --note or --note-file, not both")
	}
	return inv, nil
}

func (inv *invocation) flagTarget(name string) *string {
	switch name {
	case "--harness":
		return &inv.Opts.Harness
	case "--model":
		return &inv.Opts.Model
	case "--effort":
		return &inv.Opts.Effort
	case "--note":
		return &inv.Opts.Note
	case "--note-file":
		return &inv.Opts.NoteFile
	}
	return nil
}

// readNote loads --note-file: a regular, readable file.
func (o *RelaunchOptions) readNote() error {
	if o.NoteFile == "" {
		return nil
	}
	info, err := os.Stat(o.NoteFile)
	if err != nil || !info.Mode().IsRegular() {
		return cli.Failed("--note-file '%s' is not a readable file", state.Printable(o.NoteFile))
	}
	data, err := state.ReadSmallFile(o.NoteFile, 1<<20)
	if err != nil {
		return cli.Failed("--note-file '%s' is not a readable file: %v", state.Printable(o.NoteFile), err)
	}
	o.Note, o.NoteSet = string(data), true
	return nil
}
