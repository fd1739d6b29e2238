package spawn

import (
	"context"
	"os"
	"strings"

	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/launch"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// refusedWithRelaunch are the flags a relaunch never takes: it adopts what
// the record says rather than choosing again.
var refusedWithRelaunch = map[string]string{
	"--backend":         "a relaunch keeps the recorded backend",
	"--kind":            "a relaunch keeps the recorded kind",
	"--worktree":        "a relaunch adopts the recorded worktree",
	"--project":         "a relaunch keeps the recorded project",
	"--base":            "a relaunch adopts the recorded worktree",
	"--branch":          "a relaunch adopts the recorded worktree",
	"--brief":           "a relaunch reads the recorded brief (fm-control relaunch appends the progress note)",
	"--shared-worktree": "a relaunch adopts the recorded worktree",
	"--grant":           "a relaunch keeps the recorded grants",
	"--permissions":     "a relaunch keeps the recorded permission mode",
}

// Relaunch adopts a task's recorded endpoint and worktree for a replacement
// agent (fm-spawn --relaunch): it resolves the task under its lifecycle
// lock, picks the harness, and leaves the launch itself to launch.Relaunch,
// which fm-control relaunch calls the same way.
func (s Spawner) Relaunch(ctx context.Context, req Request) (Result, error) {
	tasks := s.tasks()
	home, err := tasks.Begin(req.ID)
	if err != nil {
		return Result{}, err
	}
	for flag, why := range refusedWithRelaunch {
		if req.given[flag] {
			return Result{}, fault.Usage("--relaunch does not take %s: %s", flag, why)
		}
	}
	if len(req.extra) > 0 {
		return Result{}, fault.Usage("--relaunch takes the task id only; unexpected argument '%s'", phrase.Printable(req.extra[0]))
	}
	store := state.Store{Dir: home.State}
	if _, err := os.Lstat(store.MetaPath(req.ID)); err != nil {
		return Result{}, fault.Failed("fm-spawn --relaunch needs an existing task record; there is no %s (launch a new task without --relaunch)", store.MetaPath(req.ID)).Coded(fault.ENoSuchTask)
	}
	lock, err := task.LockLaunch(store, req.ID)
	if err != nil {
		return Result{}, err
	}
	defer lock.Release()
	t, err := tasks.Load(home, req.ID)
	if err != nil {
		return Result{}, err
	}
	if !t.Ability.Classifier {
		return Result{}, fault.Failed("task %s runs on the %s backend, which has no recovery-grade agent-state classifier, so fm-spawn cannot prove its endpoint is agent-free", t.ID, t.BackendName).Coded(fault.ENoClassifier)
	}
	h, err := relaunchHarness(t, req.Harness)
	if err != nil {
		return Result{}, err
	}
	return s.launcher().Relaunch(ctx, t, launch.Replacement{Harness: h, Model: req.Model, Effort: req.Effort, TxID: req.TxID})
}

// relaunchHarness picks the replacement's harness: the one named, or the
// recorded one's verified family.
func relaunchHarness(t *task.Target, named string) (harness.Harness, error) {
	name := named
	if name == "" {
		if !t.HasHarness {
			return harness.Harness{}, t.RequireHarness("fm-spawn")
		}
		// A raw command's basename (grok-2) names what actually ran; its
		// family's canonical adapter is a different command, so reusing
		// "the recorded harness" must not quietly substitute it.
		if t.RecordedHarness != t.Harness.Name {
			return harness.Harness{}, fault.Failed("task %s records harness '%s', whose launch command cannot be rebuilt from its recorded name", t.ID, phrase.Printable(t.RecordedHarness)).Coded(fault.EUnverifiedHarness).
				Hint("a relaunch without --harness would run the canonical '%s' instead of the command that runs now", t.Harness.Name).
				Hint("pass --harness to choose the replacement deliberately")
		}
		name = t.Harness.Name
	}
	h, ok := harness.Lookup(name)
	if !ok {
		return harness.Harness{}, fault.Failed("'%s' is not a verified harness (verified: %s)", phrase.Printable(name), strings.Join(harness.Names(), ", ")).Coded(fault.EUnverifiedHarness)
	}
	if !h.SupportsKind(t.Kind) {
		return harness.Harness{}, fault.Failed("'%s' is not verified to run a %s task", h.Name, t.Kind).Coded(fault.EUnverifiedHarness)
	}
	return h, nil
}
