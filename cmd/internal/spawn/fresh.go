package spawn

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/harness/wiring"
	"fmctl/state"
)

// Fresh launches a new agent for a task: it creates the endpoint, publishes
// the record atomically, types the launch line and waits for the agent.
func (s Spawner) Fresh(ctx context.Context, req Request) (Result, error) {
	home, err := config.ResolveHome("fm-spawn", s.Env)
	if err != nil {
		return Result{}, err
	}
	if err := state.CheckNewTaskID("fm-spawn", req.ID); err != nil {
		return Result{}, err
	}
	if len(req.extra) > 0 {
		return Result{}, cli.Usage("unexpected argument '%s'; fm-spawn takes one task id", state.Printable(req.extra[0]))
	}
	kind, ok := harness.ParseKind(req.Kind)
	if !ok {
		return Result{}, cli.Usage("--kind must be %s", cli.OrList(harness.KindNames()))
	}
	prof, err := s.freshProfile(home, req, kind)
	if err != nil {
		return Result{}, err
	}
	h := prof.Harness
	f, err := loadConfig(home)
	if err != nil {
		return Result{}, err
	}
	plan, err := s.planWorktree(ctx, home, f, req, kind)
	if err != nil {
		return Result{}, err
	}
	wt, project := plan.Dir, plan.Project
	if kind == harness.KindSecondmate {
		if err := refuseOthersHome(wt, req.ID); err != nil {
			return Result{}, err
		}
	}
	backendName, detected, err := s.chooseBackend(home, f, req.Backend)
	if err != nil {
		return Result{}, err
	}
	if detected != "" && backendName != state.DefaultBackend {
		s.Print.Notice("backend %s chosen because fm-spawn runs inside it (%s); pass --backend or set config/backend to choose another", backendName, detected)
	}
	ability, known := harness.LookupBackend(backendName)
	if !known || !ability.Adapter {
		return Result{}, cli.Failed("backend '%s' has no adapter in fmctl (use %s)", state.Printable(backendName), cli.OrList(harness.AdapterBackendNames())).Coded(cli.ENoAdapter)
	}
	be, err := backends.Open(backendName, s.Runner, backends.Env(s.Env))
	if err != nil {
		return Result{}, cli.Failed("%w", err)
	}

	store := state.Store{Dir: home.State}
	// A torn relaunch's rollback would act on the new task's record and brief.
	lock, err := task.LockLaunch(store, req.ID)
	if err != nil {
		return Result{}, err
	}
	defer lock.Release()
	where := backends.ConfiguredContainer(backendName, backends.Env(s.Env), f)
	if backendName == harness.BackendTmux {
		if where, err = s.tmuxSession(ctx, be, where); err != nil {
			return Result{}, err
		}
	}
	if err := s.guardFresh(ctx, home, store, be, req, where, wt); err != nil {
		return Result{}, err
	}
	// A record whose endpoint is gone may be launched over; a failed launch
	// puts it back rather than deleting the keys it holds (PR, decisions).
	prior, err := state.ReadSmallFile(store.MetaPath(req.ID), state.MaxRecordBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Result{}, cli.Failed("task %s's existing record cannot be read: %v", req.ID, err).Coded(cli.EBadRecord)
	}
	brief, err := placeBrief(home, req)
	if err != nil {
		return Result{}, err
	}
	gen := newSpawnGen()
	wire := s.prepareWiring(home, h, req.ID, wt, gen)
	params := launchParams(f, h, prof.Model, prof.Effort, wt, brief, wire)
	if kind == harness.KindSecondmate {
		params.Home = wt
	}
	line, err := h.LaunchLine(params)
	if err != nil {
		return Result{}, cli.Failed("%w", err)
	}

	if err := writeIntent(store, req.ID, backendName, where, wt); err != nil {
		return Result{}, err
	}
	// The intent goes once this spawn ends either way: a launched task has
	// its record, a failed one had its endpoint removed.
	defer func() { _ = state.RemoveIfExists(store.SpawnIntentPath(req.ID)) }()
	if err := s.create(ctx, plan); err != nil {
		return Result{}, err
	}
	if kind == harness.KindSecondmate {
		if err := provisionHome(wt, req.ID, brief); err != nil {
			s.remove(ctx, plan)
			return Result{}, err
		}
	}
	fields, err := be.Create(ctx, backends.CreateSpec{TaskID: req.ID, Label: state.Label(req.ID), Dir: wt, Container: where})
	if err != nil {
		s.remove(ctx, plan)
		return Result{}, cli.Failed("could not create the endpoint for task %s on %s: %v", req.ID, backendName, backends.StderrOf(err)).Coded(cli.ELaunchFailed)
	}
	rec := newRecord(req.ID, fields, wt, project, h.Name, kind, prof.Model, prof.Effort, backendName, gen)
	ep := backends.Endpoint{Backend: backendName, Target: rec.Window(), TaskID: req.ID, Worktree: wt, Fields: rec.Map()}
	// From here a failure removes the endpoint, so no record ever names an
	// endpoint without an agent launched into it, and no endpoint is orphaned.
	undo := func(cause error) error {
		_ = be.Kill(ctx, ep)
		_ = wiring.Retire(h, wire.task)
		s.remove(ctx, plan)
		if prior != nil {
			_ = state.WriteAtomic(store.MetaPath(req.ID), prior)
		} else {
			_ = state.RemoveIfExists(store.MetaPath(req.ID))
		}
		return cause
	}
	removed := "the endpoint and record were removed"
	if prior != nil {
		removed = "the endpoint was removed and the prior record put back"
	}
	data, err := rec.Bytes()
	if err != nil {
		return Result{}, undo(cli.Failed("task %s's record cannot be written: %v", req.ID, err))
	}
	if err := state.WriteAtomic(store.MetaPath(req.ID), data); err != nil {
		return Result{}, undo(cli.Failed("task %s's record could not be published: %v; the endpoint was removed", req.ID, err))
	}
	if ability.Classifier {
		if p, ok := s.waitPath(ctx, be, ep, wt, s.pathWait()); !ok {
			return Result{}, undo(cli.Failed("task %s's new endpoint is in '%s', not its worktree '%s'; refusing to launch an agent outside its worktree (%s)", req.ID, p, wt, removed).Coded(cli.EBadWorktree))
		}
	}
	if err := wire.install(h); err != nil {
		return Result{}, undo(err)
	}
	release, err := s.lockInput(store, req.ID)
	if err != nil {
		return Result{}, undo(err)
	}
	defer release()
	ready, err := s.typeLaunch(ctx, be, ability, ep, h, line, brief)
	if err != nil {
		return Result{}, undo(cli.Failed("the agent for %s could not be launched on %s: %v; %s", req.ID, h.Name, err, removed).Coded(cli.ELaunchFailed))
	}
	out := cli.Outcome{Word: "spawned", ID: req.ID}
	out.Add("harness", h.Name).Add("kind", string(kind)).Add("backend", backendName).
		Add("window", ep.Target).Add("worktree", wt).Add("ready", ready.Ready)
	ready.addDialog(&out)
	return Result{Outcome: out, Ready: ready.Ready, Dialog: ready.Dialog, Record: rec}, nil
}

// refuseDuplicate refuses a task whose recorded endpoint still exists: a
// second launch would put two agents on one worktree.
func (s Spawner) refuseDuplicate(ctx context.Context, home config.Home, store state.Store, id string) error {
	if _, err := os.Lstat(store.MetaPath(id)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	task, err := store.LoadTask("fm-spawn", id)
	if err != nil {
		return err
	}
	name := task.Record.Backend()
	be, err := backends.Open(name, s.Runner, backends.Env(s.Env))
	if err != nil {
		return cli.Failed("task %s already has a record (%s) on backend %s, which fmctl cannot inspect; refusing a duplicate launch", id, store.MetaPath(id), name).Coded(cli.ETaskExists)
	}
	obs := be.AgentState(ctx, backends.RecordEndpoint(id, task.Record))
	if obs.State == backends.StateMissing {
		return nil
	}
	return cli.Failed("task %s already has a record whose %s endpoint %s is %s; refusing a duplicate launch (use fm-spawn %s --relaunch, or fm-control relaunch %s)", id, name, task.Record.Window(), obs.State, id, id).Coded(cli.ETaskExists)
}

// placeBrief copies --brief into data/<id>/brief.md, or requires that file.
func placeBrief(home config.Home, req Request) (string, error) {
	path := home.BriefPath(req.ID)
	if req.Brief != "" {
		data, err := os.ReadFile(req.Brief)
		if err != nil {
			return "", cli.Failed("--brief '%s' cannot be read: %v", state.Printable(req.Brief), err).Coded(cli.ENoBrief)
		}
		if err := state.NoSymlinkUnder(home.Data, path); err != nil {
			return "", cli.Failed("the brief cannot be placed at %s: %v", path, err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", cli.Failed("create %s: %v", filepath.Dir(path), err)
		}
		if err := state.WriteAtomic(path, data); err != nil {
			return "", cli.Failed("%w", err)
		}
		return path, nil
	}
	if err := state.RegularUnder(home.Data, path); err != nil {
		return "", cli.Failed("no brief at %s (%v); write the task's instructions there or pass --brief FILE", path, err).Coded(cli.ENoBrief)
	}
	return path, nil
}

// newRecord lays a fresh record out in the original toolkit's key order.
func newRecord(id string, fields []backends.Field, wt, project, h string, kind harness.Kind, model, effort, backend, gen string) state.Record {
	var r state.Record
	add := func(k, v string) { r.Entries = append(r.Entries, state.Entry{Key: k, Value: v}) }
	var extra []backends.Field
	for _, f := range fields {
		if f.Key == state.KeyWindow {
			add(state.KeyWindow, f.Value)
		} else {
			extra = append(extra, f)
		}
	}
	add(state.KeyEndpointTaskID, id)
	add(state.KeyWorktree, wt)
	add(state.KeyProject, project)
	add(state.KeyHarness, h)
	add(state.KeyKind, string(kind))
	add(state.KeyModel, orDefault(model))
	add(state.KeyEffort, orDefault(effort))
	add(state.KeySpawnGen, gen)
	if backend != state.DefaultBackend {
		add(state.KeyBackend, backend)
	}
	for _, f := range extra {
		add(f.Key, f.Value)
	}
	return r
}
