package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"fmctl/config"
	"fmctl/harness"
	"fmctl/state"
)

// errCompletionPrinted ends a run that only printed a completion script.
var errCompletionPrinted = errors.New("completion script printed")

// completionFlag is --completion SHELL on every binary: a flag rather than
// a subcommand, because fm-send's first word is always a task id.
var completionFlag = &ucli.StringFlag{Name: "completion", Usage: "print the shell completion script for `SHELL` (bash, zsh or fish)"}

func printCompletion(c *ucli.Context) error {
	shell := c.String("completion")
	if shell == "" {
		return nil
	}
	name := c.App.Name
	fn := "_" + strings.ReplaceAll(name, "-", "_")
	var script string
	switch shell {
	case "bash":
		script = fmt.Sprintf(`%[1]s() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  local words
  words=$("${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:COMP_CWORD-1}" --generate-bash-completion 2>/dev/null)
  COMPREPLY=($(compgen -W "${words}" -- "${cur}"))
}
complete -o default -F %[1]s %[2]s
`, fn, name)
	case "zsh":
		script = fmt.Sprintf(`#compdef %[2]s
%[1]s() {
  local -a words_
  words_=("${(@f)$(${words[1]} ${words[@]:1:$CURRENT-2} --generate-bash-completion 2>/dev/null)}")
  compadd -a words_
}
compdef %[1]s %[2]s
`, fn, name)
	case "fish":
		script = fmt.Sprintf("complete -c %[1]s -f -a '(%[1]s (commandline -opc)[2..-1] --generate-bash-completion 2>/dev/null)'\n", name)
	default:
		return fmt.Errorf("--completion takes bash, zsh or fish, not '%s'", state.Printable(shell))
	}
	fmt.Fprint(c.App.Writer, script)
	return errCompletionPrinted
}

// valueCompletions lists what a value flag accepts, from the capability table.
func valueCompletions(flag string) ([]string, bool) {
	switch flag {
	case "--harness":
		return harness.Names(), true
	case "--backend":
		var out []string
		for _, b := range harness.Backends() {
			if b.Adapter {
				out = append(out, b.Name)
			}
		}
		return out, true
	case "--kind":
		out := make([]string, len(harness.Kinds))
		for i, k := range harness.Kinds {
			out[i] = string(k)
		}
		return out, true
	case "--effort":
		return harness.Efforts, true
	case "--key":
		out := make([]string, len(harness.NamedKeys))
		for i, k := range harness.NamedKeys {
			out[i] = string(k)
		}
		return out, true
	}
	return nil, false
}

// CompleteTaskArgs completes the words after a command: a flag's values when
// the previous word is a value flag, else the home's task ids.
func CompleteTaskArgs(d Deps) ucli.BashCompleteFunc {
	return func(c *ucli.Context) {
		args := os.Args
		if n := len(args); n >= 2 {
			prev := args[n-2]
			if args[n-1] != "--generate-bash-completion" {
				prev = args[n-1]
			}
			if words, ok := valueCompletions(prev); ok {
				for _, w := range words {
					fmt.Fprintln(d.Stdout, w)
				}
				return
			}
		}
		for _, id := range TaskIDs(d.Env) {
			fmt.Fprintln(d.Stdout, id)
		}
	}
}

// TaskIDs returns the ids of the records in the home's state dir.
func TaskIDs(env config.Env) []string {
	home, err := config.ResolveHome("fmctl", env)
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir(home.State)
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".meta")
		if ok && state.ValidTaskID(id) && e.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	return ids
}
