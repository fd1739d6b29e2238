package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"fmctl/harness"
)

// filesDirective is the one line a completion answers with where a path
// goes (after --brief, --worktree, --project, --note-file): the shell's
// script then completes file names itself.
const filesDirective = ":files"

// Completer says what each position of a command's line takes, so
// completion offers flags where flags go, a task id only where the id goes,
// a flag's values from the capability table after it, and nothing where
// message text goes.
type Completer struct {
	Tasks Tasks
	// IDs is how many leading positional words are task ids (0 or 1).
	IDs int
	// Values are the values of the command's own value flags (--for),
	// beside those the capability table owns.
	Values map[string][]string
}

// Complete is a urfave ShellCompleteFunc. It prints one candidate a line,
// a tab and its description after it where it has one (the zsh and fish
// scripts show them; bash's drops them).
func (c Completer) Complete(ctx context.Context, cmd *ucli.Command) {
	w := cmd.Root().Writer
	args := cmd.Args().Slice()
	last := ""
	if len(args) > 0 {
		last = args[len(args)-1]
	}
	if typed := typedWord(ctx); typed != last && strings.HasPrefix(typed, "--") && !strings.Contains(typed, "=") && !spelledFlag(cmd, typed) {
		// urfave read the partial word as a flag (`--h` is -h, help):
		// it is still being typed.
		printFlags(w, cmd, typed)
		return
	}
	if strings.HasPrefix(last, "-") {
		if !spelledFlag(cmd, last) {
			printFlags(w, cmd, last)
			return
		}
		if f := valueFlag(cmd, last); f != nil {
			// A value goes here: the table's values, a path, or free
			// text (a note, a model, a jq expression), where nothing is
			// offered.
			values, ok := c.Values[last]
			if !ok {
				values, ok = flagValues(last)
			}
			switch {
			case ok:
				printLines(w, values)
			case takesFile(f):
				fmt.Fprintln(w, filesDirective)
			}
			return
		}
		args = args[:len(args)-1]
	}
	switch {
	case len(args) < c.IDs:
		for _, id := range c.Tasks.ids() {
			fmt.Fprintf(w, "%s\ttask\n", id)
		}
	case len(args) == 0 && c.IDs == 0:
		printCommands(w, cmd)
	}
}

// printCommands offers cmd's visible subcommands, each with its purpose.
func printCommands(w io.Writer, cmd *ucli.Command) {
	for _, sub := range cmd.VisibleCommands() {
		if sub.Name != "help" {
			fmt.Fprintf(w, "%s\t%s\n", sub.Name, describe(sub.Usage))
		}
	}
}

// printFlags offers cmd's flags that start with the partial word, each
// with its usage.
func printFlags(w io.Writer, cmd *ucli.Command, partial string) {
	for _, f := range append(cmd.VisibleFlags(), cmd.VisiblePersistentFlags()...) {
		usage := ""
		if d, ok := f.(ucli.DocGenerationFlag); ok {
			usage = describe(d.GetUsage())
		}
		for _, n := range f.Names() {
			if spelled := spell(n); strings.HasPrefix(spelled, partial) {
				fmt.Fprintf(w, "%s\t%s\n", spelled, usage)
			}
		}
	}
}

// describe is a usage sentence as a one-line description: without the
// backquotes that name a flag's value in help.
func describe(usage string) string {
	usage, _, _ = strings.Cut(usage, "\n")
	return strings.ReplaceAll(usage, "`", "")
}

func spell(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// typedWord is the last word before the completion request.
func typedWord(ctx context.Context) string {
	args, _ := ctx.Value(rawArgsKey{}).([]string)
	if n := len(args); n >= 2 {
		return args[n-2]
	}
	return ""
}

// spelledFlag reports whether word is one of cmd's flags spelled in full.
func spelledFlag(cmd *ucli.Command, word string) bool {
	for _, f := range flagNames(cmd, word) {
		if f == word {
			return true
		}
	}
	return false
}

func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// valueFlag is the value flag of cmd the word names, or nil.
func valueFlag(cmd *ucli.Command, word string) ucli.Flag {
	for _, f := range append(cmd.VisibleFlags(), cmd.VisiblePersistentFlags()...) {
		if tf, ok := f.(ucli.DocGenerationFlag); ok && tf.TakesValue() && hasName(f, strings.TrimLeft(word, "-")) {
			return f
		}
	}
	return nil
}

// takesFile reports whether f's value is a path.
func takesFile(f ucli.Flag) bool {
	sf, ok := f.(*ucli.StringFlag)
	return ok && sf.TakesFile
}

func hasName(f ucli.Flag, name string) bool {
	for _, n := range f.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// flagNames lists cmd's flags that start with the partial word.
func flagNames(cmd *ucli.Command, partial string) []string {
	var out []string
	for _, f := range append(cmd.VisibleFlags(), cmd.VisiblePersistentFlags()...) {
		for _, n := range f.Names() {
			if spelled := spell(n); strings.HasPrefix(spelled, partial) {
				out = append(out, spelled)
			}
		}
	}
	return out
}

// flagValues lists what a value flag accepts, from the capability table.
func flagValues(flag string) ([]string, bool) {
	switch flag {
	case "--harness":
		return harness.Names(), true
	case "--backend":
		return harness.AdapterBackendNames(), true
	case "--kind":
		return harness.KindNames(), true
	case "--effort":
		return harness.Efforts, true
	case "--key":
		return harness.KeyNames(), true
	case "--completion":
		return Shells, true
	}
	return nil, false
}

// Tasks is what the CLI knows of the home's tasks, given by the binary:
// their ids, which completion offers, and the check a word standing where
// an id goes must pass.
type Tasks struct {
	IDs   func() []string
	Check func(tool, word string) error
}

func (t Tasks) ids() []string {
	if t.IDs == nil {
		return nil
	}
	return t.IDs()
}
