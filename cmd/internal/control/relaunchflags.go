package control

import (
	"context"
	"os"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// VerbOptions are a lifecycle verb's flags: relaunch's, and interrupt's
// --drop-queue.
type VerbOptions struct {
	Relaunch  RelaunchOptions
	DropQueue bool
}

// RelaunchOptions are relaunch's flags.
type RelaunchOptions struct {
	Harness, Model, Effort string
	Note                   string
	NoteSet                bool
	NoteFile               string
}

// relaunchFlagNames are relaunch's value flags; every other verb refuses them.
var relaunchFlagNames = []string{"harness", "model", "effort", "note", "note-file"}

var relaunchUsage = map[string]string{
	"harness":   "the harness `H` of the new agent (default: the recorded one)",
	"model":     "its model `M` (default: the recorded one, when the harness stays)",
	"effort":    "its reasoning effort `E`: " + strings.Join(harness.Efforts, ", "),
	"note":      "the progress note `TEXT` appended to the brief",
	"note-file": "read the progress note from the file `PATH`",
}

func relaunchFlags() []ucli.Flag {
	var fs []ucli.Flag
	for _, name := range relaunchFlagNames {
		fs = append(fs, &ucli.StringFlag{Name: name, Usage: relaunchUsage[name], Validator: cli.Value(name), TakesFile: name == "note-file"})
	}
	return fs
}

// relaunchOptions reads relaunch's parsed flags.
func relaunchOptions(cmd *ucli.Command) (RelaunchOptions, error) {
	o := RelaunchOptions{
		Harness: cmd.String("harness"), Model: cmd.String("model"), Effort: cmd.String("effort"),
		Note: cmd.String("note"), NoteSet: cmd.IsSet("note"), NoteFile: cmd.String("note-file"),
	}
	if err := cli.ProfileFlags(o.Harness, o.Model, o.Effort); err != nil {
		return o, err
	}
	if o.NoteSet && o.NoteFile != "" {
		return o, fault.Usage("pass --note or --note-file, not both")
	}
	return o, nil
}

// command is the relaunch of task id these options ask for, as a hint
// offers it with the note still to write (<note>).
func (o RelaunchOptions) command(id string) string {
	words := []string{"fm-control", "relaunch", id}
	for _, f := range [][2]string{{"harness", o.Harness}, {"model", o.Model}, {"effort", o.Effort}} {
		if f[1] != "" {
			words = append(words, "--"+f[0], harness.QuoteIfNeeded(f[1]))
		}
	}
	return strings.Join(append(words, "--note", "<note>"), " ")
}

// relaunchOnly is the usage-error handler of every verb but relaunch: one of
// relaunch's flags there gets its own sentence.
func relaunchOnly(ctx context.Context, cmd *ucli.Command, err error, _ bool) error {
	if flag, ok := cli.UnknownFlag(ctx, err); ok && slices.Contains(relaunchFlagNames, strings.TrimLeft(flag, "-")) {
		return fault.Usage("--harness, --model, --effort, --note and --note-file apply to 'relaunch' only (see %s --help)", cmd.FullName())
	}
	return cli.UsageError(ctx, cmd, err, false)
}

// readNote loads --note-file: a regular, readable file.
func (o *RelaunchOptions) readNote() error {
	if o.NoteFile == "" {
		return nil
	}
	info, err := os.Stat(o.NoteFile)
	if err != nil || !info.Mode().IsRegular() {
		return fault.Failed("--note-file '%s' is not a readable file", phrase.Printable(o.NoteFile))
	}
	data, err := state.ReadSmallFile(o.NoteFile, 1<<20)
	if err != nil {
		return fault.Failed("--note-file '%s' is not a readable file: %v", phrase.Printable(o.NoteFile), err)
	}
	o.Note, o.NoteSet = string(data), true
	return nil
}
