package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/fault"
	"fmctl/phrase"
)

// Shells are the shells `completion` prints a script for.
var Shells = []string{"bash", "zsh", "fish"}

// errCompletionPrinted ends a run that only printed a completion script.
var errCompletionPrinted = errors.New("completion script printed")

// enableCompletion gives a binary its `completion bash|zsh|fish`: a command
// where the binary has commands (fm-control), else the two words alone on
// the line (fm-send and fm-spawn take a task id first, which may be any
// word: `fm-send completion -- bash` sends "bash" to a task named
// completion). The urfave answer to --generate-shell-completion is enabled
// only under the scripts' FM_COMPLETION. The old --completion SHELL flag
// still prints the script, with a warning.
func enableCompletion(root *ucli.Command, d IO) {
	root.EnableShellCompletion = d.Completing
	// urfave's own completion command is given a name no word can reach
	// (a word starting with '-' is parsed as a flag): fmctl's prints
	// its own scripts.
	root.ShellCompletionCommandName = "-completion"
	root.UsageText += "\n" + root.Name + " completion " + strings.Join(Shells, "|")
	root.Flags = append(root.Flags, &ucli.StringFlag{
		Name: "completion", Local: true, Hidden: true,
		Usage: "deprecated: use `completion SHELL`",
	})
	before := root.Before
	root.Before = func(ctx context.Context, cmd *ucli.Command) (context.Context, error) {
		if shell := cmd.String("completion"); shell != "" {
			fmt.Fprintf(cmd.Root().ErrWriter, "warning: --completion is deprecated; use '%s completion %s'\n", cmd.Root().Name, phrase.Printable(shell))
			if err := printScript(d.Stdout, cmd.Root().Name, shell, d.CompletionVar); err != nil {
				return ctx, err
			}
			return ctx, errCompletionPrinted
		}
		if before != nil {
			return before(ctx, cmd)
		}
		return ctx, nil
	}
	if len(root.Commands) > 0 {
		root.Commands = append(root.Commands, completionCommand(root.Name, d.CompletionVar, d.Stdout))
		return
	}
	action := root.Action
	root.Action = func(ctx context.Context, cmd *ucli.Command) error {
		if args := cmd.Args().Slice(); len(args) == 2 && args[0] == "completion" && slices.Contains(Shells, args[1]) && len(AfterDoubleDash(ctx)) == 0 {
			return printScript(d.Stdout, cmd.Root().Name, args[1], d.CompletionVar)
		}
		return action(ctx, cmd)
	}
}

// completionCommand prints its script to out, never through the help
// writer, which would break a long line of it.
func completionCommand(name, envVar string, out io.Writer) *ucli.Command {
	return &ucli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		UsageText: name + " completion " + strings.Join(Shells, "|"),
		Description: `Prints a script that completes verbs, task ids, flags and their values (with
descriptions in zsh and fish), file paths after a flag that takes one, nothing where
free text goes.

Examples:
   source <(` + name + ` completion bash)
   ` + name + ` completion zsh > "${fpath[1]}/_` + name + `"
   ` + name + ` completion fish > ~/.config/fish/completions/` + name + `.fish`,
		ShellComplete: func(_ context.Context, cmd *ucli.Command) {
			if cmd.NArg() == 0 {
				printLines(cmd.Root().Writer, Shells)
			}
		},
		Action: func(_ context.Context, cmd *ucli.Command) error {
			if cmd.NArg() != 1 {
				return fault.Usage("%s completion takes one shell: %s", name, strings.Join(Shells, ", "))
			}
			return printScript(out, name, cmd.Args().First(), envVar)
		},
	}
}

// The scripts ask the binary for the candidates at the cursor (the words
// before it, and the word under it when it begins a flag), one a line with
// a tab and a description after it; ":files" asks for file names instead.
const bashScript = `{{fn}}() {
  local cur="${COMP_WORDS[COMP_CWORD]}" out
  local -a args=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
  [[ "${cur}" == -* ]] && args+=("${cur}")
  out=$({{env}}=1 "${COMP_WORDS[0]}" "${args[@]}" --generate-shell-completion 2>/dev/null | cut -f1)
  if [[ "${out}" == ":files" ]]; then
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "${cur}"))
    return
  fi
  COMPREPLY=($(compgen -W "${out}" -- "${cur}"))
}
complete -F {{fn}} {{name}}
`

const zshScript = `#compdef {{name}}
{{fn}}() {
  local -a args lines cands
  local l
  args=("${words[@]:1:$CURRENT-2}")
  [[ "${words[$CURRENT]}" == -* ]] && args+=("${words[$CURRENT]}")
  lines=("${(@f)$({{env}}=1 ${words[1]} "${args[@]}" --generate-shell-completion 2>/dev/null)}")
  if [[ "${lines[1]}" == ":files" ]]; then
    _files
    return
  fi
  for l in "${lines[@]}"; do
    [[ -z "${l}" ]] && continue
    if [[ "${l}" == *$'\t'* ]]; then
      cands+=("${${l%%$'\t'*}//:/\\:}:${l#*$'\t'}")
    else
      cands+=("${l//:/\\:}")
    fi
  done
  _describe '{{name}}' cands
}
compdef {{fn}} {{name}}
`

const fishScript = `function {{fn}}
    set -l out (env {{env}}=1 {{name}} (commandline -opc)[2..-1] (string match -- "-*" (commandline -ct)) --generate-shell-completion 2>/dev/null)
    if test "$out[1]" = ":files"
        __fish_complete_path (commandline -ct)
        return
    end
    printf '%s\n' $out
end
complete -c {{name}} -f -a '({{fn}})'
`

func printScript(w io.Writer, name, shell, envVar string) error {
	scripts := map[string]string{"bash": bashScript, "zsh": zshScript, "fish": fishScript}
	script, ok := scripts[shell]
	if !ok {
		return fault.Usage("completion takes %s", phrase.OneOf(shell, Shells))
	}
	fn := "_" + strings.ReplaceAll(name, "-", "_")
	if shell == "fish" {
		fn = "_" + fn + "_complete"
	}
	_, err := io.WriteString(w, strings.NewReplacer("{{fn}}", fn, "{{name}}", name, "{{env}}", envVar).Replace(script))
	return err
}
