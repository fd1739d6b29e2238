package spawn

import (
	"context"
	"os"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/harness/wiring"
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
}

// Relaunch adopts a task's recorded endpoint and worktree for a replacement
// agent. lockHeld says the caller (fm-control relaunch) already holds the
// task's lifecycle lock.
func (s Spawner) Relaunch(ctx context.Context, req Request, lockHeld bool) (Result, error) {
	tasks := task.Opener{Tool: "fm-spawn", Env: s.Env, Runner: s.Runner}
	home, err := tasks.Begin(req.ID)
	if err != nil {
		return Result{}, err
	}
	for flag, why := range refusedWithRelaunch {
		if req.given[flag] {
			return Result{}, cli.Usage("--relaunch does not take %s: %s", flag, why)
		}
	}
	if len(req.extra) > 0 {
		return Result{}, cli.Usage("--relaunch takes the task id only; unexpected argument '%s'", state.Printable(req.extra[0]))
	}
	store := state.Store{Dir: home.State}
	if _, err := os.Lstat(store.MetaPath(req.ID)); err != nil {
		return Result{}, cli.Failed("fm-spawn --relaunch needs an existing task record; there is no %s (launch a new task without --relaunch)", store.MetaPath(req.ID)).Coded(cli.ENoSuchTask)
	}
	if !lockHeld {
		// Under fm-control relaunch the journal is this launch's own.
		lock, err := task.LockLaunch(store, req.ID)
		if err != nil {
			return Result{}, err
		}
		defer lock.Release()
	}
	t, err := tasks.Load(home, req.ID)
	if err != nil {
		return Result{}, err
	}
	if !t.Ability.Classifier {
		return Result{}, cli.Failed("task %s runs on the %s backend, which has no recovery-grade agent-state classifier, so fm-spawn cannot prove its endpoint is agent-free; refusing to relaunch into it", t.ID, t.BackendName).Coded(cli.ENoClassifier)
	}
	h, err := relaunchHarness(t, req.Harness)
	if err != nil {
		return Result{}, err
	}
	wt := t.Endpoint.Worktree
	if info, err := os.Stat(wt); err != nil || !info.IsDir() {
		return Result{}, cli.Failed("task %s's recorded worktree '%s' does not exist; refusing to relaunch without the copy holding its work", t.ID, wt).Coded(cli.EBadWorktree)
	}
	// From the agent-free check to the launch line, nothing else may type.
	release, err := s.lockInput(store, t.ID)
	if err != nil {
		return Result{}, err
	}
	defer release()
	if err := s.adoptEndpoint(ctx, t); err != nil {
		return Result{}, err
	}
	if p, ok := s.waitPath(ctx, t.Backend, t.Endpoint, wt, s.pathWait()); !ok {
		return Result{}, cli.Failed("task %s's endpoint is in '%s', not its recorded worktree '%s'; refusing to relaunch an agent outside the copy holding its work", t.ID, p, wt).Coded(cli.EBadWorktree)
	}
	brief := home.BriefPath(t.ID)
	if err := state.RegularUnder(home.Data, brief); err != nil {
		return Result{}, cli.Failed("no brief at %s (%v); a replacement launched now would be pointed at instructions that do not exist, so write them first", brief, err).Coded(cli.ENoBrief)
	}
	// The launch line is built before the old wiring is retired, so a bad
	// config or model refuses while the previous incarnation is intact.
	f, err := loadConfig(home)
	if err != nil {
		return Result{}, err
	}
	model, effort := orDefault(req.Model), orDefault(req.Effort)
	gen := newSpawnGen()
	wire := s.prepareWiring(home, h, t.ID, wt, gen)
	params := launchParams(f, h, model, effort, wt, brief, wire)
	if t.Kind == harness.KindSecondmate {
		params.Home = wt
	}
	line, err := h.LaunchLine(params)
	if err != nil {
		return Result{}, cli.Failed("%w", err)
	}
	if err := retireWiring(t); err != nil {
		return Result{}, err
	}
	rec := t.Task.Record.Clone()
	rec.Set(state.KeyHarness, h.Name)
	rec.Set(state.KeyModel, model)
	rec.Set(state.KeyEffort, effort)
	rec.Set(state.KeySpawnGen, gen)
	rec.Delete(state.KeyBusyGen)
	if req.TxID != "" {
		rec.Set(state.KeyControlRelaunchTx, req.TxID)
	} else {
		rec.Delete(state.KeyControlRelaunchTx)
	}
	data, err := rec.Bytes()
	if err != nil {
		return Result{}, cli.Failed("task %s's new record cannot be written: %v", t.ID, err)
	}
	if err := state.Fault("publish"); err != nil {
		return Result{}, cli.Failed("task %s's new record could not be published: %v; the prior record is unchanged", t.ID, err)
	}
	if err := state.WriteAtomic(t.Task.Path, data); err != nil {
		return Result{}, cli.Failed("task %s's new record could not be published: %v; the prior record is unchanged", t.ID, err)
	}
	_ = state.RemoveIfExists(store.BusyGenPath(t.ID))
	if err := wire.install(h); err != nil {
		return Result{Record: rec}, cli.Failed("task %s's new record (harness %s) is published, but %v", t.ID, h.Name, err).Coded(cli.ELaunchFailed).Put(cli.Yes("published"))
	}
	ready, err := s.typeLaunch(ctx, t.Backend, t.Ability, t.Endpoint, h, line, brief)
	if err != nil {
		// fm-control relaunch wraps this in its own "could not be launched"
		// sentence, so this one says what is already true: the record is new.
		return Result{Record: rec}, cli.Failed("task %s's new record (harness %s) is published, but its agent did not come up: %v", t.ID, h.Name, err).Coded(cli.ELaunchFailed).Put(cli.Yes("published"))
	}
	out := cli.Outcome{Word: "spawned", ID: t.ID}
	out.Add("harness", h.Name).Add("kind", string(t.Kind)).Add("backend", t.BackendName).
		Add("window", t.Endpoint.Target).Add("worktree", wt).Add("ready", ready.Ready)
	ready.addDialog(&out)
	out.Put(cli.Yes("relaunch"))
	return Result{Outcome: out, Ready: ready.Ready, Dialog: ready.Dialog, Record: rec}, nil
}

// pathWait bounds how long the endpoint's shell gets to report its directory.
func (s Spawner) pathWait() time.Duration {
	return config.Duration(s.Env, "FM_SPAWN_PATH_WAIT", 5*time.Second)
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
			return harness.Harness{}, cli.Failed("task %s records harness '%s', whose original launch command cannot be reconstructed from its recorded basename; relaunching without --harness would substitute the canonical adapter '%s' for the command actually running. Pass an explicit --harness to choose the replacement runtime deliberately", t.ID, state.Printable(t.RecordedHarness), t.Harness.Name).Coded(cli.EUnverifiedHarness)
		}
		name = t.Harness.Name
	}
	h, ok := harness.Lookup(name)
	if !ok {
		return harness.Harness{}, cli.Failed("'%s' is not a verified harness (verified: %s)", state.Printable(name), strings.Join(harness.Names(), ", ")).Coded(cli.EUnverifiedHarness)
	}
	if !h.SupportsKind(t.Kind) {
		return harness.Harness{}, cli.Failed("'%s' is not verified to run a %s task", h.Name, t.Kind).Coded(cli.EUnverifiedHarness)
	}
	return h, nil
}

// adoptEndpoint requires the recorded endpoint to be positively agent-free,
// recreating it (same label, recorded worktree) when it is provably gone.
func (s Spawner) adoptEndpoint(ctx context.Context, t *task.Target) error {
	obs := t.Backend.AgentState(ctx, t.Endpoint)
	switch obs.State {
	case backends.StateDead, backends.StateMissing:
		// The recorded endpoint is agent-free; no other pane may hold
		// an agent in the worktree either (a renamed window under an old
		// record reads missing, while its agent runs on).
		// Tasks spawned with --shared-worktree keep their agents there.
		sharers, err := s.refuseSharedWorktree(ctx, t.Store, t.ID, t.Endpoint.Worktree, true)
		if err != nil {
			return err
		}
		if err := refuseOccupied(ctx, t.Backend, t.ID, t.Endpoint.Worktree, sharers); err != nil {
			return err
		}
	}
	switch obs.State {
	case backends.StateDead:
		return nil
	case backends.StateDrifted:
		return cli.Failed("task %s's endpoint %s has drifted (%s); refusing to relaunch into it or beside it: %s", t.ID, t.Endpoint.Target, obs.Detail, t.DriftFix()).Coded(cli.EEndpointDrifted)
	case backends.StateMissing:
		// The replacement goes where the record says (backends.RecreateSpec).
		fields, err := t.Backend.Create(ctx, backends.RecreateSpec(t.Endpoint))
		if err != nil {
			return cli.Failed("task %s's endpoint %s is provably absent, and a replacement could not be created: %v", t.ID, t.Endpoint.Target, backends.StderrOf(err))
		}
		for _, f := range fields {
			t.Task.Record.Set(f.Key, f.Value)
		}
		t.Endpoint.Target = t.Task.Record.Window()
		t.Endpoint.Fields = t.Task.Record.Map()
		s.Print.Notice("relaunch: endpoint of %s was provably absent (backend: %s); created a replacement at %s", t.ID, t.BackendName, t.Endpoint.Target)
		return nil
	case backends.StateAlive:
		return cli.Failed("task %s's endpoint %s still runs an agent; fm-spawn --relaunch needs an agent-free endpoint. Stop the agent first with fm-control exit %s", t.ID, t.Endpoint.Target, t.ID).Coded(cli.EAgentRunning)
	}
	return cli.Failed("task %s's endpoint %s reads '%s' (%s), not a positively agent-free endpoint; refusing to launch into it", t.ID, t.Endpoint.Target, obs.State, obs.Detail).Coded(cli.EAgentUnverified)
}

// retireWiring removes the previous incarnation's per-task harness files.
func retireWiring(t *task.Target) error {
	if !t.HasHarness {
		return nil
	}
	if err := wiring.Retire(t.Harness, wiring.Task{Worktree: t.Endpoint.Worktree, StateDir: t.Store.Dir, ID: t.ID}); err != nil {
		return cli.Failed("could not retire %s wiring %v and the record is unchanged", t.Harness.Name, err)
	}
	return nil
}
