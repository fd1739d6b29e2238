package launch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"fmctl/backends"
	"fmctl/backends/mux"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// Replacement is what a relaunch starts in a task's recorded endpoint and
// worktree.
type Replacement struct {
	Harness       harness.Harness // a verified row that supports the task's kind
	Model, Effort string
	// TxID is the fm-control relaunch transaction this launch belongs to,
	// published as control_relaunch_tx so the transaction can prove the
	// record is its own; empty removes a previous one.
	TxID string
}

// Relaunch starts a replacement agent for task t, which the caller resolved
// under its lifecycle lock with no torn relaunch journal, on a backend with
// a recovery-grade classifier. The endpoint must be positively agent-free and sit in the recorded worktree; it is recreated
// where the record says when it is provably gone. The new record is
// published only once the launch line is built and the previous wiring
// retired, so every refusal before that leaves the record as it was.
func (l Launcher) Relaunch(ctx context.Context, t *task.Target, r Replacement) (Result, error) {
	wt := t.Endpoint.Worktree
	if info, err := os.Stat(wt); err != nil || !info.IsDir() {
		return Result{}, fault.Failed("task %s's recorded worktree '%s' does not exist; refusing to relaunch without the copy holding its work", t.ID, wt).Coded(fault.EBadWorktree)
	}
	// From the agent-free check to the launch line, nothing else may type.
	release, err := l.LockInput(t.Store, t.ID)
	if err != nil {
		return Result{}, err
	}
	defer release()
	// A fresh launch into the worktree guards and launches under this lock
	// too, so the two cannot both find it agent-free.
	wtLock, err := l.LockWorktree(t.Store, t.ID, wt)
	if err != nil {
		return Result{}, err
	}
	defer wtLock.Release()
	rec := t.Task.Record.Clone()
	ep, err := l.adoptEndpoint(ctx, t, &rec)
	if err != nil {
		return Result{}, err
	}
	if p, ok := l.WaitPath(ctx, t.Backend, ep, wt); !ok {
		return Result{}, fault.Failed("task %s's endpoint is in '%s', not its recorded worktree '%s'; refusing to relaunch an agent outside the copy holding its work", t.ID, p, wt).Coded(fault.EBadWorktree)
	}
	inc, brief, err := l.prepareReplacement(t, r)
	if err != nil {
		return Result{}, err
	}
	if err := t.RetireWiring(); err != nil {
		return Result{}, retireRefusal(t, err)
	}
	if err := publish(t, &rec, r, inc.Gen); err != nil {
		return Result{}, err
	}
	h := r.Harness
	if err := inc.Install(h); err != nil {
		return Result{Record: rec}, fault.Failed("task %s's new record (harness %s) is published, but %v", t.ID, h.Name, err).Coded(fault.ELaunchFailed).Put(fault.Yes("published"))
	}
	MarkLaunchPrompt(t.Store, t.ID, brief, time.Now())
	ready, err := l.Type(ctx, t.Backend, t.Ability, ep, h, inc, brief)
	if err != nil {
		// fm-control relaunch wraps this in its own "could not be launched"
		// sentence, so this one says what is already true: the record is new.
		return Result{Record: rec}, Explain(fault.Failed("the agent did not come up: %w", err).Coded(fault.ELaunchFailed).Put(fault.Yes("published")).
			Hint("task %s's new record (harness %s) is published; to read it: fm-control status %s", t.ID, h.Name, t.ID), err, h)
	}
	out := append(Spawned(h.Name, string(t.Kind), t.BackendName, t.Backend, ep, wt, ready), fault.Yes("relaunch"))
	return Result{Facts: out, Ready: ready.Ready, Dialog: ready.Dialog, Record: rec}, nil
}

// CheckReplacement makes Relaunch's refusals that do not wait on the stop:
// fm-control relaunch calls it before it stops the agent, so a missing
// brief, a bad config/fm.toml or model, wiring that cannot be retired or
// installed (a symlinked .claude) or another agent working in the worktree
// is refused while the agent still runs. The launch line it
// builds is thrown away.
func (l Launcher) CheckReplacement(ctx context.Context, t *task.Target, r Replacement) error {
	inc, _, err := l.prepareReplacement(t, r)
	if err != nil {
		return err
	}
	if err := t.CheckRetireWiring(); err != nil {
		return retireRefusal(t, err)
	}
	if err := inc.CheckInstall(r.Harness); err != nil {
		return err
	}
	ignore, err := l.RefuseSharedWorktree(ctx, t.Store, t.ID, t.Endpoint.Worktree, t.Task.Record.SharedWorktree(), true)
	if err != nil {
		return err
	}
	// The task's own agent is the one the relaunch stops.
	ignore[state.Label(t.ID)] = true
	return RefuseOccupied(ctx, t.Backend, t.ID, t.Endpoint.Worktree, ignore)
}

func retireRefusal(t *task.Target, err error) error {
	return fault.Failed("could not retire %s wiring: %w", t.Harness.Name, err).
		Hint("nothing was deleted and the record is unchanged: mend what the error names, then relaunch again")
}

// prepareReplacement builds the replacement's launch line before the old
// wiring is retired, so a missing brief, a bad config or a bad model
// refuses while the previous incarnation is intact.
func (l Launcher) prepareReplacement(t *task.Target, r Replacement) (Incarnation, string, error) {
	brief := t.Home.BriefPath(t.ID)
	if err := state.RegularUnder(t.Home.Data, brief); err != nil {
		return Incarnation{}, "", BriefRefusal(brief, err).
			Hint("write the task's instructions there first: a replacement launched now would have none")
	}
	f, err := LoadConfig(t.Home)
	if err != nil {
		return Incarnation{}, "", err
	}
	// The recorded mode was checked when it was written; an unreadable one
	// launches as ask would not, so it is refused rather than read as auto.
	mode, ok := harness.ParsePermissionMode(t.Task.Record.Permissions())
	if !ok {
		return Incarnation{}, "", fault.Failed("task %s records permissions=%s, which is not %s; fix the record before relaunching", t.ID, phrase.Printable(t.Task.Record.Permissions()), phrase.OrList(harness.PermissionModes())).Coded(fault.EBadRecord)
	}
	inc, err := l.Prepare(t.Home, f, Agent{Harness: r.Harness, ID: t.ID, Kind: t.Kind, Worktree: t.Endpoint.Worktree, Brief: brief, Model: OrDefault(r.Model), Effort: OrDefault(r.Effort), Permissions: mode})
	return inc, brief, err
}

// publish writes the replacement's record over the task's: the recorded
// one (with any recreated endpoint's fields) under the new harness, model,
// effort and generation, and the relaunch transaction it belongs to.
func publish(t *task.Target, rec *state.Record, r Replacement, gen string) error {
	rec.Set(state.KeyHarness, r.Harness.Name)
	rec.Set(state.KeyModel, OrDefault(r.Model))
	rec.Set(state.KeyEffort, OrDefault(r.Effort))
	rec.Set(state.KeySpawnGen, gen)
	rec.Delete(state.KeyBusyGen)
	if r.TxID != "" {
		rec.Set(state.KeyControlRelaunchTx, r.TxID)
	} else {
		rec.Delete(state.KeyControlRelaunchTx)
	}
	data, err := rec.Bytes()
	if err != nil {
		return fault.Failed("task %s's new record cannot be written: %v", t.ID, err)
	}
	if err := state.Inject("publish"); err != nil {
		return fault.Failed("task %s's new record could not be published: %v; the prior record is unchanged", t.ID, err)
	}
	if err := state.WriteAtomic(t.Task.Path, data); err != nil {
		return fault.Failed("task %s's new record could not be published: %v; the prior record is unchanged", t.ID, err)
	}
	_ = state.RemoveIfExists(t.Store.BusyGenPath(t.ID))
	return nil
}

// adoptEndpoint requires the recorded endpoint to be positively agent-free,
// recreating it (same label, recorded worktree) when it is provably gone;
// a recreated endpoint's fields go into rec. It returns the endpoint the
// replacement is launched into.
func (l Launcher) adoptEndpoint(ctx context.Context, t *task.Target, rec *state.Record) (backends.Endpoint, error) {
	ep := t.Endpoint
	obs := t.Backend.AgentState(ctx, ep)
	switch obs.State {
	case backends.StateDead, backends.StateMissing:
		// The recorded endpoint is agent-free; no other pane may hold
		// an agent in the worktree either (a renamed window under an old
		// record reads missing, while its agent runs on).
		// Tasks spawned with --shared-worktree keep their agents there.
		sharers, err := l.RefuseSharedWorktree(ctx, t.Store, t.ID, ep.Worktree, t.Task.Record.SharedWorktree(), true)
		if err != nil {
			return ep, err
		}
		if err := RefuseOccupied(ctx, t.Backend, t.ID, ep.Worktree, sharers); err != nil {
			return ep, err
		}
	}
	switch obs.State {
	case backends.StateDead:
		return ep, nil
	case backends.StateMissing:
		return l.recreate(ctx, t, rec)
	case backends.StateDrifted:
		return ep, fault.Failed("task %s's endpoint %s has drifted (%s); refusing to relaunch into it or beside it", t.ID, ep.Target, obs.Detail).Coded(fault.EEndpointDrifted).Hint("%s", t.DriftFix())
	case backends.StateAlive:
		return ep, fault.Failed("task %s's endpoint %s still runs an agent; %s relaunches only into an agent-free endpoint", t.ID, ep.Target, l.Tool).Coded(fault.EAgentRunning).
			Hint("stop the agent first: fm-control exit %s", t.ID)
	}
	return ep, fault.Failed("task %s's endpoint %s reads '%s' (%s), not a positively agent-free endpoint; refusing to launch into it", t.ID, ep.Target, obs.State, obs.Detail).Coded(fault.EAgentUnverified)
}

// recreate makes a replacement for a provably absent endpoint where the
// record says (mux.RecreateSpec), never in a default container.
func (l Launcher) recreate(ctx context.Context, t *task.Target, rec *state.Record) (backends.Endpoint, error) {
	ep := t.Endpoint
	fields, err := t.Backend.Create(ctx, mux.RecreateSpec(ep))
	if err != nil {
		return ep, fault.Failed("task %s's endpoint %s is provably absent, and a replacement could not be created: %v", t.ID, ep.Target, backends.StderrOf(err))
	}
	// The gone pane's pid names a process that no longer holds the task:
	// only the replacement's own, when its backend reports one, may stand.
	rec.Delete(state.KeyPanePID)
	rec.Delete(state.KeyTmuxPanePID)
	rec.Delete(state.KeyTmuxServer)
	for _, f := range fields {
		rec.Set(f.Key, f.Value)
	}
	ep.Target = rec.Window()
	ep.Fields = rec.Map()
	l.Print.Notice("relaunch: endpoint of %s was provably absent (backend: %s); created a replacement at %s", t.ID, t.BackendName, ep.Target)
	return ep, nil
}

// BriefRefusal says why the brief at path cannot be read: missing, or
// present but unusable (a symlink, not a regular file), with cause kept.
func BriefRefusal(path string, err error) *fault.Error {
	if errors.Is(err, fs.ErrNotExist) {
		e := fault.Failed("no brief at %s", path).Coded(fault.ENoBrief)
		e.Err = err
		return e
	}
	return fault.Failed("the brief %s cannot be used: %w", path, err).Coded(fault.ENoBrief)
}
