package spawn

import (
	"strings"

	"fmctl/cmd/internal/cli"
	"fmctl/harness"
	"fmctl/state"
)

// Request is one parsed fm-spawn invocation.
type Request struct {
	ID       string
	Relaunch bool
	Harness  string
	Model    string
	Effort   string
	Kind     string
	Worktree string
	Project  string
	Base     string // new worktree: the commit to start from
	Branch   string // new worktree: its branch (fm/<id>)
	Backend  string
	Brief    string
	JSON     bool
	Help     bool
	// SharedWorktree allows a worktree another live task already uses.
	SharedWorktree bool
	// TxID is the relaunch transaction this launch belongs to
	// (FM_CONTROL_RELAUNCH_TX); it is published in the new record.
	TxID string
	// given records which flags were passed, for --relaunch's refusals.
	given map[string]bool
	extra []string
}

var valueFlags = map[string]bool{
	"--harness": true, "--model": true, "--effort": true, "--kind": true, "--worktree": true,
	"--project": true, "--backend": true, "--brief": true, "--base": true, "--branch": true,
}

// parseArgs reads `<id> [flags]` with flags in any position.
func parseArgs(args []string) (Request, error) {
	r := Request{given: map[string]bool{}}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
			continue
		case "--json":
			r.JSON = true
			continue
		case "-h", "--help":
			r.Help = true
			continue
		case "--relaunch":
			r.Relaunch = true
			continue
		case "--shared-worktree":
			r.SharedWorktree = true
			r.given[a] = true
			continue
		case "--scout", "--secondmate":
			r.given["--kind"] = true
			r.Kind = strings.TrimPrefix(a, "--")
			continue
		}
		flagName, _, _ := strings.Cut(a, "=")
		if !valueFlags[flagName] {
			if strings.HasPrefix(a, "-") {
				return r, cli.Usage("unexpected argument '%s' (see fm-spawn --help)", state.Printable(a))
			}
			positional = append(positional, a)
			continue
		}
		name, value, last, err := cli.FlagValue(args, i)
		if err != nil {
			return r, cli.Usage("%v", err)
		}
		i = last
		r.given[name] = true
		switch name {
		case "--harness":
			r.Harness = value
		case "--model":
			r.Model = value
		case "--effort":
			r.Effort = value
		case "--kind":
			r.Kind = value
		case "--worktree":
			r.Worktree = value
		case "--project":
			r.Project = value
		case "--base":
			r.Base = value
		case "--branch":
			r.Branch = value
		case "--backend":
			r.Backend = value
		case "--brief":
			r.Brief = value
		}
	}
	if len(positional) > 0 {
		r.ID = positional[0]
		r.extra = positional[1:]
	}
	if r.Effort != "" && !harness.ValidEffort(r.Effort) {
		return r, cli.Usage("--effort must be one of %s", strings.Join(harness.Efforts, ", "))
	}
	if r.Model != "" && r.Model != "default" && !harness.ValidModel(r.Model) {
		return r, cli.Usage("--model '%s' has characters outside [A-Za-z0-9._:/@+-]", state.Printable(r.Model))
	}
	return r, nil
}
