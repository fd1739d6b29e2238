package spawn

import (
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"fmctl/authority"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/harness"
	"fmctl/phrase"
)

// Request is one fm-spawn invocation, from urfave's parse of the command line.
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
	// Permissions is the permission mode the agent launches in ("" = auto).
	Permissions string
	JSON        bool
	// SharedWorktree allows a worktree another live task already uses.
	SharedWorktree bool
	// Grants widen what the new task's own agent may do (--grant); only
	// the operator may give them.
	Grants []authority.GrantRule
	// SpawnedBy is the task whose pane ran this spawn ("" the operator).
	SpawnedBy string
	// TxID is the relaunch transaction this launch belongs to
	// (FM_CONTROL_RELAUNCH_TX); it is published in the new record.
	TxID string
	// given records which flags were passed, for --relaunch's refusals.
	given map[string]bool
	extra []string
}

// valueFlags are fm-spawn's string flags, each checked by cli.Value.
var valueFlags = []string{"harness", "model", "effort", "kind", "worktree", "project", "base", "branch", "backend", "brief", "permissions"}

func flags() []ucli.Flag {
	fs := []ucli.Flag{
		&ucli.BoolFlag{Name: "json", Usage: "print the outcome as one JSON object"},
		&ucli.BoolFlag{Name: "relaunch", Usage: "adopt the recorded endpoint and worktree for a replacement agent"},
		&ucli.BoolFlag{Name: "shared-worktree", Usage: "allow a worktree another live task records"},
		&ucli.StringSliceFlag{Name: "grant", Usage: "let the new task's agent act on others: `GRANT` is verb[,verb]@id or @" + authority.Children + ", repeatable, the operator's alone"},
	}
	for _, k := range kindShortcuts() {
		fs = append(fs, &ucli.BoolFlag{Name: k, Usage: "same as --kind " + k})
	}
	for _, name := range valueFlags {
		fs = append(fs, &ucli.StringFlag{Name: name, Usage: flagUsage[name], Validator: cli.Value(name), TakesFile: pathFlags[name]})
	}
	return fs
}

// pathFlags take a file or directory: completion offers paths after them.
var pathFlags = map[string]bool{"worktree": true, "project": true, "brief": true}

var flagUsage = map[string]string{
	"harness":     "the agent CLI `H` to launch (see fm-control capabilities; required unless config/crew-harness names one)",
	"model":       "the harness's model `M` (default: the harness's own)",
	"effort":      "reasoning effort `E`: " + strings.Join(harness.Efforts, ", "),
	"kind":        "the task's `KIND` (see fm-control capabilities)",
	"worktree":    "adopt the existing, clean git worktree root `DIR`",
	"project":     "add the task's worktree to the repository `REPO`",
	"base":        "new worktree: the `REF` to start from (default origin/HEAD)",
	"branch":      "new worktree: its branch `NAME` (default fm/<id>)",
	"backend":     "the multiplexer `B` to run the agent in",
	"brief":       "copy the `FILE` to data/<id>/brief.md (required unless that is written)",
	"permissions": "the agent's permission `MODE`: " + strings.Join(harness.PermissionModes(), " (default) or ") + " (its own dialogs, which it waits at); a relaunch keeps it",
}

// kindShortcuts are the kinds with a flag of their own (--scout): every
// kind but the default.
func kindShortcuts() []string {
	var out []string
	for _, k := range harness.Kinds {
		if k != harness.KindShip {
			out = append(out, string(k))
		}
	}
	return out
}

// request reads `<id> [flags]` from the parsed command line.
func request(cmd *ucli.Command) (Request, error) {
	r := Request{
		JSON: cmd.Bool("json"), Relaunch: cmd.Bool("relaunch"), SharedWorktree: cmd.Bool("shared-worktree"),
		Harness: cmd.String("harness"), Model: cmd.String("model"), Effort: cmd.String("effort"),
		Kind: cmd.String("kind"), Worktree: cmd.String("worktree"), Project: cmd.String("project"),
		Base: cmd.String("base"), Branch: cmd.String("branch"), Backend: cmd.String("backend"),
		Brief: cmd.String("brief"), Permissions: cmd.String("permissions"),
		given: map[string]bool{},
	}
	for _, name := range append([]string{"shared-worktree"}, valueFlags...) {
		r.given["--"+name] = cmd.IsSet(name)
	}
	for _, kind := range kindShortcuts() {
		if cmd.Bool(kind) {
			r.given["--kind"] = true
			r.Kind = kind
		}
	}
	if args := cmd.Args().Slice(); len(args) > 0 {
		r.ID, r.extra = args[0], args[1:]
	}
	for _, s := range cmd.StringSlice("grant") {
		g, err := authority.ParseGrant(s)
		if err != nil {
			return r, fault.Usage("--grant: %v", err)
		}
		r.Grants = append(r.Grants, g)
	}
	r.given["--grant"] = len(r.Grants) > 0
	return r, checkValues(r)
}

// command is this spawn as a hint offers it again with its worktree given
// another way (flags: --project or --worktree and their values, quoted or
// a <placeholder>): what chose the agent and its brief is kept, so the
// command works as printed.
func (r Request) command(flags ...string) string {
	words := []string{"fm-spawn", r.ID}
	for _, f := range [][2]string{{"harness", r.Harness}, {"kind", r.Kind}, {"model", r.Model}, {"effort", r.Effort}, {"permissions", r.Permissions}, {"backend", r.Backend}} {
		if f[1] != "" {
			words = append(words, "--"+f[0], harness.QuoteIfNeeded(f[1]))
		}
	}
	words = append(words, flags...)
	if r.Brief != "" {
		words = append(words, "--brief", harness.QuoteIfNeeded(r.Brief))
	}
	return strings.Join(words, " ")
}

// checkValues refuses a flag value outside the capability table's closed
// sets as the usage error it is (exit 2, with the value probably meant),
// before any path on the command line is looked at.
func checkValues(r Request) error {
	if err := cli.ProfileFlags(r.Harness, r.Model, r.Effort); err != nil {
		return err
	}
	if _, ok := harness.ParsePermissionMode(r.Permissions); !ok {
		return fault.Usage("--permissions must be %s", phrase.OneOf(r.Permissions, harness.PermissionModes()))
	}
	if _, ok := harness.ParseKind(r.Kind); !ok {
		return fault.Usage("--kind must be %s%s", phrase.OrList(harness.KindNames()), phrase.DidYouMean(r.Kind, harness.KindNames()))
	}
	if b := r.Backend; b != "" && !slices.Contains(harness.AdapterBackendNames(), b) {
		return fault.Usage("backend '%s' has no adapter in fmctl (use %s)%s", phrase.Printable(b), phrase.OrList(harness.AdapterBackendNames()), phrase.DidYouMean(b, harness.AdapterBackendNames()))
	}
	return nil
}
