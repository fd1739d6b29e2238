package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/fault"
	"fmctl/harness"
	"fmctl/phrase"
)

type rawArgsKey struct{}

// Run runs cmd on args (args[0] is the program) and maps its error to an exit
// code, printing it once: urfave never exits the process or prints an error
// itself, so every error goes through the one printer, in JSON under --json.
func Run(cmd *ucli.Command, args []string, d IO) int {
	if completing(args) && cmd.EnableShellCompletion && len(cmd.Commands) > 0 && len(args) == 3 && args[1] == "help" {
		// urfave answers for its own help command, which offers nothing:
		// what goes after help is a verb.
		printCommands(cmd.Writer, cmd)
		return CodeDone
	}
	var out Output
	var err error
	if !completing(args) {
		// A line being completed is unfinished: its --jq has no
		// expression yet.
		if args, out, err = SplitOutputArgs(args); err != nil {
			return d.Printer(true).Error(err)
		}
	}
	if d.Output != nil {
		*d.Output = out
	}
	if !completing(args) && asksHelpExits(args) {
		if err := printExitCodes(d.Stdout, ReadableWidth(TerminalWidth(d.Stdout))); err != nil {
			return d.Printer(false).Error(err)
		}
		return CodeDone
	}
	// Every verb runs under one context SIGINT and SIGTERM cancel: a verb
	// that waits (an exit, a relaunch, a wait, a remote call) stops
	// promptly and says where it stopped, and its calls' process groups
	// are killed with it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = cmd.Run(context.WithValue(ctx, rawArgsKey{}, args), args)
	if hw, ok := cmd.Writer.(*helpWriter); ok {
		hw.flush()
	}
	if err == nil {
		err = d.Output.Err()
	}
	if err == nil || errors.Is(err, errCompletionPrinted) {
		return CodeDone
	}
	var relayed *Relayed
	if errors.As(err, &relayed) {
		return relayed.Exit
	}
	var own *fault.Error
	var ec ucli.ExitCoder
	if !errors.As(err, &own) && errors.As(err, &ec) {
		// urfave's own exit (help for a topic that does not exist) is a
		// command-line mistake, whatever code urfave picked for it.
		err = fault.Usage("%s (see %s --help)", phrase.Printable(err.Error()), cmd.Name)
	}
	return d.Printer(jsonRequested(cmd, args)).Error(err)
}

// jsonRequested reports whether the command line asked for JSON: the parsed
// flag, or, when parsing stopped at an error before reaching it, a --json
// word anywhere before "--", so a usage error is JSON too.
func jsonRequested(cmd *ucli.Command, args []string) bool {
	return cmd.Bool("json") || AsksJSON(args)
}

// AsksJSON reports whether a command line (args[0] is the program) has a
// --json word before any "--".
func AsksJSON(args []string) bool {
	for _, a := range args[min(1, len(args)):] {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// AfterDoubleDash returns the words of the command line after its first "--":
// text, never flags.
func AfterDoubleDash(ctx context.Context) []string {
	args, _ := ctx.Value(rawArgsKey{}).([]string)
	if i := slices.Index(args, "--"); i >= 0 {
		return args[i+1:]
	}
	return nil
}

// Conventions applies what every binary shares to its root command: version,
// output streams, usage errors (exit 2 with a suggestion), help with the
// exit-code table, `help` as a word, and shell completion.
func Conventions(root *ucli.Command, d IO) {
	root.Version = BuildVersion()
	root.Writer, root.ErrWriter = d.Stdout, d.Stderr
	if !d.Completing {
		// Help is laid out for the terminal it is read on; completion
		// candidates are one a line for the shell, whatever their length.
		root.Writer = &helpWriter{w: d.Stdout, width: ReadableWidth(TerminalWidth(d.Stdout))}
	}
	// Run maps every error to its exit code; urfave must not exit.
	root.ExitErrHandler = func(context.Context, *ucli.Command, error) {}
	exitCodes := exitCodesHelp()
	root.CustomRootCommandHelpTemplate = ucli.RootCommandHelpTemplate + exitCodes
	enableCompletion(root, d)
	refuseEnvironment(root, d)
	addJQFlag(root)
	if len(root.Commands) == 0 {
		// fm-send and fm-spawn take a task id first: "help" would be one,
		// so it is not a command, but a lone "help" shows the help.
		root.HideHelpCommand = true
		root.Action = loneHelp(root.Action)
	}
	root.Description = reflowProse(root.Description)
	commandConventions(root, ucli.CommandHelpTemplate+exitCodes)
}

// refuseEnvironment stops every command on the environment's refusal
// (d.Refused) before it acts. urfave runs Before after --help and
// --version have answered, so those still do.
func refuseEnvironment(root *ucli.Command, d IO) {
	if d.Refused == nil || d.Completing {
		return
	}
	before := root.Before
	root.Before = func(ctx context.Context, cmd *ucli.Command) (context.Context, error) {
		if before != nil {
			if ctx, err := before(ctx, cmd); err != nil {
				return ctx, err
			}
		}
		return ctx, d.Refused
	}
}

// addJQFlag gives every command that takes --json its --jq, which Run
// reads off the command line before urfave does (see SplitOutputArgs):
// here it is for help and completion, and says what --json takes.
func addJQFlag(cmd *ucli.Command) {
	for _, f := range cmd.Flags {
		if b, ok := f.(*ucli.BoolFlag); ok && b.Name == "json" {
			b.Usage += "; --json a,b prints only those fields (when the word names them)"
			cmd.Flags = append(cmd.Flags, &ucli.StringFlag{Name: "jq", Usage: "filter the outcome through the jq `EXPR` (implies --json)"})
			break
		}
	}
	for _, sub := range cmd.Commands {
		addJQFlag(sub)
	}
}

// completing reports whether a command line is a shell's completion
// request (see enableCompletion).
func completing(args []string) bool {
	return len(args) > 1 && args[len(args)-1] == "--generate-shell-completion"
}

// ownHelp makes `--help` on a command without subcommands show its help
// whatever words surround it: urfave takes the first word after a command
// as a help topic (`fm-send t1 --help` asks for topic "t1"), and a command
// without subcommands has no topics, only itself.
func ownHelp(ctx context.Context, cmd *ucli.Command, _ string) {
	if lineage := cmd.Lineage(); len(lineage) > 1 {
		_ = ucli.ShowCommandHelp(ctx, lineage[1], cmd.Name)
		return
	}
	_ = ucli.ShowRootCommandHelp(cmd)
}

// commandConventions gives every command the usage-error handler, help with
// the exit codes, and, for one without subcommands, help whatever its words.
func commandConventions(cmd *ucli.Command, helpTemplate string) {
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = UsageError
	}
	if len(cmd.Commands) == 0 {
		cmd.CommandNotFound = ownHelp
	}
	for _, sub := range cmd.Commands {
		sub.CustomHelpTemplate = helpTemplate
		sub.Description = reflowProse(sub.Description)
		// A verb's words are ids: "help" after a verb is not a command.
		sub.HideHelpCommand = len(sub.Commands) == 0
		commandConventions(sub, helpTemplate)
	}
}

// HelpForMissing answers a command line that names nothing to act on (a
// bare fm-spawn or fm-control): the help, on stderr since it is not the
// output asked for, and a usage error (exit 2), so a script that lost its
// arguments fails instead of reading help as success.
func HelpForMissing(cmd *ucli.Command, format string, args ...any) error {
	root := cmd.Root()
	out := root.Writer
	help := &helpWriter{w: root.ErrWriter, width: ReadableWidth(TerminalWidth(root.ErrWriter))}
	root.Writer = help
	defer func() { root.Writer = out }()
	_ = ucli.ShowRootCommandHelp(cmd)
	help.flush()
	return fault.Usage(format, args...)
}

// CatchSIGPIPE is for a verb that prints until stopped (list --watch,
// read --follow): with SIGPIPE caught, a write to a closed stdout returns
// EPIPE and the verb ends with exit 0 instead of the process dying by the
// signal. It returns the function that stops catching it.
func CatchSIGPIPE() (stop func()) {
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	return func() { signal.Stop(pipe) }
}

func loneHelp(action ucli.ActionFunc) ucli.ActionFunc {
	return func(ctx context.Context, cmd *ucli.Command) error {
		if args := cmd.Args().Slice(); len(args) == 1 && args[0] == "help" && len(AfterDoubleDash(ctx)) == 0 {
			return ucli.ShowRootCommandHelp(cmd)
		}
		return action(ctx, cmd)
	}
}

// idFirstKey marks, in a command's Metadata, a command whose first word is
// a task id.
const idFirstKey = "fmctl.id-first"

// TaskCommand marks cmd as one whose first word is a task id: completion
// offers the home's ids there (and values, beside the table's, for the
// command's own value flags), and a single-dash word there is checked as an
// id. It returns cmd.
func TaskCommand(cmd *ucli.Command, tasks Tasks, values map[string][]string) *ucli.Command {
	cmd.ShellComplete = Completer{Tasks: tasks, IDs: 1, Values: values}.Complete
	cmd.Metadata = map[string]any{idFirstKey: tasks}
	return cmd
}

// UsageError turns urfave's parse error into fmctl's usage error (exit 2):
// the flag as it was typed, a did-you-mean when a defined flag is close,
// and where to read more. It is every command's OnUsageError.
func UsageError(ctx context.Context, cmd *ucli.Command, err error, _ bool) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		word := spelling(ctx, name)
		suggestion := closestFlag(cmd, name)
		if idErr := idInFlagsPlace(cmd, word, suggestion); idErr != nil {
			return idErr
		}
		msg = fmt.Sprintf("%s takes no flag '%s'", cmd.FullName(), phrase.Printable(word))
		if suggestion != "" {
			msg += "; did you mean " + suggestion + "?"
		}
	} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		msg = fmt.Sprintf("%s needs a value", phrase.Printable(name))
	} else if head, why, ok := strings.Cut(msg, " for flag -"); ok && strings.HasPrefix(msg, "invalid value ") {
		// urfave wraps a Validator's sentence, which names the flag; any
		// other reason (a bool's "parse error") names nothing, so say it.
		if name, inner, ok := strings.Cut(why, ": "); ok {
			msg = inner
			switch {
			case inner == "can't duplicate this flag": // an OnlyOnce flag given twice
				msg = fmt.Sprintf("--%s is given more than once; pass it once", name)
			case !strings.HasPrefix(inner, "--"):
				value, err := strconv.Unquote(strings.TrimPrefix(head, "invalid value "))
				if err != nil {
					value = strings.TrimPrefix(head, "invalid value ")
				}
				msg = fmt.Sprintf("'%s' is not a value --%s takes", phrase.Printable(value), name)
			}
		}
	}
	return fault.Usage("%s (see %s --help)", msg, cmd.FullName())
}

// idInFlagsPlace checks, as a task id, a single-dash word standing where a
// command's task id goes (`fm-send -rf hello`) that is no misspelt flag: it
// is far likelier a hostile or mistaken id than a flag, so its error is the
// id check's. No valid id starts with '-', so it is always refused.
func idInFlagsPlace(cmd *ucli.Command, word, suggestion string) error {
	tasks, ok := cmd.Metadata[idFirstKey].(Tasks)
	if !ok || tasks.Check == nil || cmd.NArg() > 0 || strings.HasPrefix(word, "--") || suggestion != "" {
		return nil
	}
	return tasks.Check(cmd.Root().Name, word)
}

// UnknownFlag returns the flag named in urfave's "not defined" error, as typed.
func UnknownFlag(ctx context.Context, err error) (string, bool) {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return "", false
	}
	return spelling(ctx, name), true
}

// spelling finds how the user typed the flag urfave names without its dashes.
func spelling(ctx context.Context, name string) string {
	args, _ := ctx.Value(rawArgsKey{}).([]string)
	for _, a := range args {
		word, _, _ := strings.Cut(a, "=")
		if word == "-"+name || word == "--"+name {
			return word
		}
	}
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func closestFlag(cmd *ucli.Command, name string) string {
	flags := append(cmd.VisibleFlags(), cmd.VisiblePersistentFlags()...)
	s := ucli.SuggestFlag(flags, name, false)
	if !phrase.Close(name, strings.TrimLeft(s, "-")) {
		return ""
	}
	return s
}

// Value is a string flag value check: present and not itself a flag, so
// `--note --json` is a missing note, not a note saying "--json".
func Value(name string) func(string) error {
	return func(v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("--%s needs a non-empty value", name)
		}
		if strings.HasPrefix(v, "--") {
			return fmt.Errorf("--%s needs a value, and '%s' is a flag", name, phrase.Printable(v))
		}
		return nil
	}
}

// ProfileFlags checks --harness, --model and --effort, the values a launch
// line carries, so fm-spawn and a relaunch refuse a bad one before anything
// is touched (a relaunch would otherwise find it only after stopping the
// agent), as the usage error it is.
func ProfileFlags(h, model, effort string) error {
	if _, ok := harness.Lookup(h); h != "" && !ok {
		return fault.Usage("unknown harness '%s'%s", phrase.Printable(h), phrase.DidYouMean(h, harness.Names())).
			Hint("fmctl launches verified harnesses only: %s", strings.Join(harness.Names(), ", "))
	}
	if effort != "" && !harness.ValidEffort(effort) {
		return fault.Usage("--effort must be %s", phrase.OneOf(effort, harness.Efforts))
	}
	if model != "" && model != "default" && !harness.ValidModel(model) {
		return fault.Usage("--model '%s' has characters outside [A-Za-z0-9._:/@+-]", phrase.Printable(model))
	}
	return nil
}
