package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"fmctl/config"
	"fmctl/harness"
	"fmctl/state"
)

// CompletionEnv (FM_COMPLETION) is set by the scripts --completion prints.
// urfave answers a command line ending in --generate-shell-completion with
// completions; only when the shell's script asks, so that word typed by
// anyone else is an unknown flag (or, after "--", message text) instead of
// a silent exit 0.
const CompletionEnv = config.CompletionVar

// errCompletionPrinted ends a run that only printed a completion script.
var errCompletionPrinted = errors.New("completion script printed")

func enableCompletion(root *ucli.Command, d Deps) {
	root.EnableShellCompletion = d.Tunables.Completion
	// urfave adds a "completion" command; fmctl prints its scripts with
	// --completion (fm-send's first word is a task id, and may be
	// "completion"), so the command gets a name no word can reach: a word
	// starting with '-' is parsed as a flag.
	root.ShellCompletionCommandName = "-completion"
	root.Flags = append(root.Flags, &ucli.StringFlag{
		Name: "completion", Local: true,
		Usage: "print the shell completion script for `SHELL` (bash, zsh or fish)",
	})
	before := root.Before
	root.Before = func(ctx context.Context, cmd *ucli.Command) (context.Context, error) {
		if shell := cmd.String("completion"); shell != "" {
			if err := printScript(cmd.Root().Writer, cmd.Root().Name, shell); err != nil {
				return ctx, err
			}
			return ctx, errCompletionPrinted
		}
		if before != nil {
			return before(ctx, cmd)
		}
		return ctx, nil
	}
}

func printScript(w io.Writer, name, shell string) error {
	fn := "_" + strings.ReplaceAll(name, "-", "_")
	var script string
	switch shell {
	case "bash":
		script = fmt.Sprintf(`%[1]s() {
  local cur="${COMP_WORDS[COMP_CWORD]}" words
  local -a args=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
  [[ "${cur}" == -* ]] && args+=("${cur}")
  words=$(%[3]s=1 "${COMP_WORDS[0]}" "${args[@]}" --generate-shell-completion 2>/dev/null)
  COMPREPLY=($(compgen -W "${words}" -- "${cur}"))
}
complete -o default -F %[1]s %[2]s
`, fn, name, CompletionEnv)
	case "zsh":
		script = fmt.Sprintf(`#compdef %[2]s
%[1]s() {
  local -a args words_
  args=("${words[@]:1:$CURRENT-2}")
  [[ "${words[$CURRENT]}" == -* ]] && args+=("${words[$CURRENT]}")
  words_=("${(@f)$(%[3]s=1 ${words[1]} "${args[@]}" --generate-shell-completion 2>/dev/null)}")
  compadd -a words_
}
compdef %[1]s %[2]s
`, fn, name, CompletionEnv)
	case "fish":
		script = fmt.Sprintf("complete -c %[1]s -f -a '(env %[2]s=1 %[1]s (commandline -opc)[2..-1] (string match -- \"-*\" (commandline -ct)) --generate-shell-completion 2>/dev/null)'\n", name, CompletionEnv)
	default:
		return Usage("--completion takes bash, zsh or fish, not '%s'", state.Printable(shell))
	}
	_, err := io.WriteString(w, script)
	return err
}

// Completer says what each position of a command's line takes, so
// completion offers flags where flags go, a task id only where the id goes,
// a flag's values from the capability table after it, and nothing where
// message text goes.
type Completer struct {
	Home config.HomeVars
	// IDs is how many leading positional words are task ids (0 or 1).
	IDs int
	// Values are the values of the command's own value flags (--for),
	// beside those the capability table owns.
	Values map[string][]string
}

// Complete is a urfave ShellCompleteFunc.
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
		printLines(w, flagNames(cmd, typed))
		return
	}
	if strings.HasPrefix(last, "-") {
		values, ok := c.Values[last]
		if !ok {
			values, ok = flagValues(last)
		}
		if ok && takesValue(cmd, last) {
			printLines(w, values)
			return
		}
		printLines(w, flagNames(cmd, last))
		return
	}
	switch {
	case len(args) < c.IDs:
		printLines(w, TaskIDs(c.Home))
	case len(args) == 0:
		for _, sub := range cmd.VisibleCommands() {
			fmt.Fprintln(w, sub.Name)
		}
	}
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

// takesValue reports whether the word names one of cmd's value flags.
func takesValue(cmd *ucli.Command, word string) bool {
	for _, f := range append(cmd.VisibleFlags(), cmd.VisiblePersistentFlags()...) {
		if tf, ok := f.(ucli.DocGenerationFlag); ok && tf.TakesValue() && hasName(f, strings.TrimLeft(word, "-")) {
			return true
		}
	}
	return false
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
			spelled := "--" + n
			if len(n) == 1 {
				spelled = "-" + n
			}
			if strings.HasPrefix(spelled, partial) {
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
		return []string{"bash", "zsh", "fish"}, true
	}
	return nil, false
}

// TaskIDs returns the ids of the records in the home's state dir.
func TaskIDs(v config.HomeVars) []string {
	home, err := config.ResolveHome("fmctl", v)
	if err != nil {
		return nil
	}
	return state.Store{Dir: home.State}.TaskIDs()
}
