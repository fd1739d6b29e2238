package spawn

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"fmctl/authority"
	"fmctl/backends"
	"fmctl/backends/mux"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/launch"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// fresh is one fresh launch: what is decided before the task's lock
// (harness, worktree, backend), then under it (container, prior record,
// brief, launch line).
type fresh struct {
	req     Request
	home    config.Home
	store   state.Store
	file    config.File
	kind    harness.Kind
	prof    profile
	plan    worktreePlan
	backend string
	ability harness.Backend
	be      backends.Backend

	where string // the container the endpoint goes into
	prior []byte // the record a launch goes over, put back if it fails
	brief string // data/<id>/brief.md
	// briefText is --brief's contents, read before anything is made;
	// priorBrief the brief it goes over (if hadBrief), put back if the
	// launch fails.
	briefText  []byte
	priorBrief []byte
	hadBrief   bool
	inc        launch.Incarnation
	// unprovision takes back a secondmate home provisionHome made.
	unprovision func()
}

// Fresh launches a new agent for a task: it creates the endpoint, publishes
// the record atomically, types the launch line and waits for the agent.
func (s Spawner) Fresh(ctx context.Context, req Request) (Result, error) {
	f, err := s.decide(ctx, req)
	if err != nil {
		return Result{}, err
	}
	// The command line is checked, so a first spawn may set the home up.
	if err := f.home.SetUp("fm-spawn", s.Tunables.Home); err != nil {
		return Result{}, err
	}
	// A torn relaunch's rollback would act on the new task's record and brief.
	lock, err := task.LockLaunch(f.store, req.ID)
	if err != nil {
		return Result{}, err
	}
	defer lock.Release()
	wtLock, err := s.launcher().LockWorktree(f.store, req.ID, f.plan.Dir)
	if err != nil {
		return Result{}, err
	}
	defer wtLock.Release()
	if err := s.prepare(ctx, f); err != nil {
		return Result{}, err
	}
	if err := launch.WriteIntent(f.store, req.ID, f.backend, f.where, f.plan.Dir); err != nil {
		return Result{}, err
	}
	// The intent goes once this spawn ends either way: a launched task has
	// its record, a failed one had its endpoint removed.
	defer func() { _ = state.RemoveIfExists(f.store.SpawnIntentPath(req.ID)) }()
	if err := f.placeBrief(); err != nil {
		return Result{}, err
	}
	res, err := s.place(ctx, f)
	if err != nil {
		f.restoreBrief()
	}
	return res, err
}

// decide settles everything a fresh launch needs before it takes the task's
// lock: the id, the kind and harness, the worktree and the backend.
func (s Spawner) decide(ctx context.Context, req Request) (*fresh, error) {
	home, err := s.tasks().BeginNew(req.ID)
	if err != nil {
		return nil, err
	}
	if len(req.extra) > 0 {
		return nil, fault.Usage("unexpected argument '%s'; fm-spawn takes one task id", phrase.Printable(req.extra[0]))
	}
	f := &fresh{req: req, home: home, store: state.Store{Dir: home.State}, unprovision: func() {}}
	// Checked again under the task's lock (LockLaunch, guardFresh); here
	// they come before the worktree is planned, so a task that runs (or a
	// torn relaunch of it) is refused as that, not for its worktree being
	// there.
	if err := f.store.RefuseTorn(req.ID); err != nil {
		return nil, err
	}
	if err := s.refuseDuplicate(ctx, home, f.store, req.ID); err != nil {
		return nil, err
	}
	var ok bool
	if f.kind, ok = harness.ParseKind(req.Kind); !ok {
		return nil, fault.Usage("--kind must be %s", phrase.OrList(harness.KindNames()))
	}
	if f.prof, err = s.freshProfile(home, req, f.kind); err != nil {
		return nil, err
	}
	if f.file, err = launch.LoadConfig(home); err != nil {
		return nil, err
	}
	if f.plan, err = s.planWorktree(ctx, home, f.file, req, f.kind); err != nil {
		return nil, err
	}
	for _, dir := range []string{f.plan.Dir, f.plan.Project} {
		if err := state.CheckValue(dir); err != nil {
			return nil, fault.Failed("the path '%s' cannot be recorded (its %v)", phrase.Printable(dir), err).Coded(fault.EBadWorktree).
				Hint("rename the directory, or pass one without such a character")
		}
	}
	if f.kind == harness.KindSecondmate {
		if err := refuseOthersHome(f.plan.Dir, req.ID); err != nil {
			return nil, err
		}
		if err := refuseFirstmateHome(home, f.plan.Dir, req); err != nil {
			return nil, err
		}
	}
	f.brief = home.BriefPath(req.ID)
	if f.briefText, err = readBrief(f.brief, home, req); err != nil {
		return nil, err
	}
	if err := s.openBackend(f); err != nil {
		return nil, err
	}
	return f, nil
}

// openBackend chooses the backend the task runs on and opens its adapter.
func (s Spawner) openBackend(f *fresh) error {
	name, detected, err := s.chooseBackend(f.home, f.file, f.req.Backend)
	if err != nil {
		return err
	}
	if detected != "" && name != state.DefaultBackend {
		s.Print.Notice("backend %s chosen because fm-spawn runs inside it (%s); pass --backend or set config/backend to choose another", name, detected)
	}
	ability, known := harness.LookupBackend(name)
	if !known || !ability.Adapter {
		return fault.Failed("backend '%s' has no adapter in fmctl (use %s)", phrase.Printable(name), phrase.OrList(harness.AdapterBackendNames())).Coded(fault.ENoAdapter)
	}
	be, err := mux.Open(name, s.Runner, backends.Env(s.Env), s.Tunables.Mux)
	if err != nil {
		return fault.Failed("%w", err)
	}
	f.backend, f.ability, f.be = name, ability, be
	return nil
}

// prepare, under the task's lock, proves no second agent can result, keeps
// any record the launch goes over and builds the launch line; it creates
// nothing.
func (s Spawner) prepare(ctx context.Context, f *fresh) error {
	var err error
	id := f.req.ID
	f.where = mux.ConfiguredContainer(f.backend, backends.Env(s.Env), s.Tunables.Mux, f.file)
	if f.backend == harness.BackendTmux {
		if f.where, err = s.tmuxSession(ctx, f.be, f.where); err != nil {
			return err
		}
	}
	if err := s.guardFresh(ctx, f.home, f.store, f.be, f.req, f.where, f.plan.Dir); err != nil {
		return err
	}
	// A record whose endpoint is gone may be launched over; a failed launch
	// puts it back rather than deleting the keys it holds (PR, decisions).
	f.prior, err = state.ReadSmallFile(f.store.MetaPath(id), state.MaxRecordBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fault.Failed("task %s's existing record cannot be read: %v", id, err).Coded(fault.EBadRecord).Coded(fault.EBadRecord)
	}
	f.inc, err = s.launcher().Prepare(f.home, f.file, launch.Agent{Harness: f.prof.Harness, ID: id, Kind: f.kind, Worktree: f.plan.Dir, Brief: f.brief, Model: f.prof.Model, Effort: f.prof.Effort, Permissions: f.permissions()})
	return err
}

// place creates the worktree and endpoint, publishes the record and
// launches the agent. From the endpoint's creation on, a failure removes
// it, so no record ever names an endpoint without an agent launched into
// it, and no endpoint is orphaned.
func (s Spawner) place(ctx context.Context, f *fresh) (Result, error) {
	id, wt, h := f.req.ID, f.plan.Dir, f.prof.Harness
	fields, err := s.createEndpoint(ctx, f)
	if err != nil {
		return Result{}, err
	}
	rec := newRecord(id, fields, wt, f.plan.Project, h.Name, f.kind, f.prof.Model, f.prof.Effort, f.backend, f.inc.Gen)
	if f.req.SharedWorktree {
		// so that the task it joined may relaunch beside it
		rec.Set(state.KeySharedWorktree, state.Yes)
	}
	if f.permissions() != harness.PermAuto {
		rec.Set(state.KeyPermissions, string(f.permissions()))
	}
	if len(f.req.Grants) > 0 {
		rec.Set(state.KeyGrants, authority.FormatGrants(f.req.Grants))
	}
	if f.req.SpawnedBy != "" {
		rec.Set(state.KeySpawnedBy, f.req.SpawnedBy)
	}
	ep := backends.Endpoint{Backend: f.backend, Target: rec.Window(), TaskID: id, Worktree: wt, Fields: rec.Map()}
	removed := "the endpoint and record were removed"
	if f.prior != nil {
		removed = "the endpoint was removed and the prior record put back"
	}
	data, err := rec.Bytes()
	if err != nil {
		return Result{}, s.undo(ctx, f, ep, fault.Failed("task %s's record cannot be written: %v", id, err))
	}
	if err := state.WriteAtomic(f.store.MetaPath(id), data); err != nil {
		return Result{}, s.undo(ctx, f, ep, fault.Failed("task %s's record could not be published: %v; the endpoint was removed", id, err))
	}
	l := s.launcher()
	if f.ability.Classifier {
		if p, ok := l.WaitPath(ctx, f.be, ep, wt); !ok {
			return Result{}, s.undo(ctx, f, ep, fault.Failed("task %s's new endpoint is in '%s', not its worktree '%s'; refusing to launch an agent outside its worktree (%s)", id, p, wt, removed).Coded(fault.EBadWorktree))
		}
	}
	if err := f.inc.Install(h); err != nil {
		return Result{}, s.undo(ctx, f, ep, err)
	}
	release, err := l.LockInput(f.store, id)
	if err != nil {
		return Result{}, s.undo(ctx, f, ep, err)
	}
	defer release()
	launch.MarkLaunchPrompt(f.store, id, f.brief, time.Now())
	ready, err := l.Type(ctx, f.be, f.ability, ep, h, f.inc, f.brief)
	if err != nil {
		return Result{}, s.undo(ctx, f, ep, launch.Explain(fault.Failed("the agent for %s could not be launched on %s: %v; %s", id, h.Name, err, removed).Coded(fault.ELaunchFailed), err, h))
	}
	out := launch.Spawned(h.Name, string(f.kind), f.backend, f.be, ep, wt, ready)
	return Result{Facts: out, Ready: ready.Ready, Dialog: ready.Dialog, Record: rec}, nil
}

// createEndpoint adds the planned worktree (a secondmate's provisioned as
// its home) and the endpoint in it, removing the worktree again if the
// endpoint cannot be made.
func (s Spawner) createEndpoint(ctx context.Context, f *fresh) ([]backends.Field, error) {
	id, wt := f.req.ID, f.plan.Dir
	if err := s.create(ctx, f.plan); err != nil {
		return nil, err
	}
	if f.kind == harness.KindSecondmate {
		var err error
		if f.unprovision, err = provisionHome(wt, id, f.brief); err != nil {
			f.unprovision()
			s.remove(ctx, f.plan)
			return nil, err
		}
	}
	fields, err := f.be.Create(ctx, backends.CreateSpec{TaskID: id, Label: state.Label(id), Dir: wt, Container: f.where})
	if err != nil {
		f.unprovision()
		s.remove(ctx, f.plan)
		return nil, fault.Failed("could not create the endpoint for task %s on %s: %v", id, f.backend, backends.StderrOf(err)).Coded(fault.ELaunchFailed)
	}
	return fields, nil
}

// undo removes what place made (the endpoint, the wiring, the worktree)
// and puts back the record the launch went over, then returns cause.
func (s Spawner) undo(ctx context.Context, f *fresh, ep backends.Endpoint, cause error) error {
	_ = f.be.Kill(ctx, ep)
	f.inc.Retire(f.prof.Harness)
	f.unprovision()
	s.remove(ctx, f.plan)
	if f.prior != nil {
		_ = state.WriteAtomic(f.store.MetaPath(f.req.ID), f.prior)
	} else {
		_ = state.RemoveIfExists(f.store.MetaPath(f.req.ID))
	}
	return cause
}

// refuseDuplicate refuses a task whose recorded endpoint still exists: a
// second launch would put two agents on one worktree.
func (s Spawner) refuseDuplicate(ctx context.Context, home config.Home, store state.Store, id string) error {
	if _, err := os.Lstat(store.MetaPath(id)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	t, err := store.LoadTask("fm-spawn", id)
	if err != nil {
		return err
	}
	name := t.Record.Backend()
	be, err := mux.Open(name, s.Runner, backends.Env(s.Env), s.Tunables.Mux)
	if err != nil {
		return fault.Failed("task %s already has a record (%s) on backend %s, which fmctl cannot inspect; refusing a duplicate launch", id, store.MetaPath(id), name).Coded(fault.ETaskExists)
	}
	obs := be.AgentState(ctx, backends.RecordEndpoint(id, t.Record))
	if obs.State == backends.StateMissing {
		return nil
	}
	e := fault.Failed("task %s already has a record whose %s endpoint %s is %s; refusing a duplicate launch", id, name, t.Record.Window(), obs.State).Coded(fault.ETaskExists)
	kind, _ := harness.ParseKind(t.Record.Kind())
	if obs.State == backends.StateAlive {
		return e.Hint("to replace its agent with a new one: %s", task.RelaunchCommand(id, kind)).
			Hint("or spawn the new task under another id")
	}
	return e.Hint("to start its agent again: %s", task.Relaunches(id, kind))
}

// readBrief reads --brief, or checks that the home holds the task's brief
// (path), before anything is made: a first spawn refused for its brief
// leaves the home as it found it.
func readBrief(path string, home config.Home, req Request) ([]byte, error) {
	if req.Brief == "" {
		if err := state.RegularUnder(home.Data, path); err != nil {
			return nil, launch.BriefRefusal(path, err).Hint("write the task's instructions there, or pass --brief <file>")
		}
		return nil, nil
	}
	data, err := state.ReadUserFile(req.Brief, state.MaxBriefBytes)
	if err != nil {
		return nil, fault.Failed("--brief '%s' cannot be used (%v)", phrase.Printable(req.Brief), err).Coded(fault.ENoBrief).
			Hint("pass --brief <file> naming a regular file of the task's instructions")
	}
	return data, nil
}

// placeBrief copies --brief into data/<id>/brief.md, keeping the brief it
// goes over.
func (f *fresh) placeBrief() error {
	if f.req.Brief == "" {
		return nil // the home's own, checked by readBrief
	}
	if err := state.NoSymlinkUnder(f.home.Data, f.brief); err != nil {
		return fault.Failed("the brief cannot be placed at %s: %v", f.brief, err).
			Hint("move that aside (fmctl makes data/<id>/ a directory of its own), then spawn again")
	}
	if err := os.MkdirAll(filepath.Dir(f.brief), 0o755); err != nil {
		return fault.Failed("create %s: %v", filepath.Dir(f.brief), err)
	}
	prior, err := state.ReadSmallFile(f.brief, state.MaxBriefBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fault.Failed("task %s's existing brief cannot be kept: %v", f.req.ID, err).Coded(fault.ENoBrief).
			Hint("move it aside, then spawn again")
	}
	if err := state.WriteAtomic(f.brief, f.briefText); err != nil {
		return fault.Failed("%w", err)
	}
	f.priorBrief, f.hadBrief = prior, err == nil
	return nil
}

// permissions is the mode the request asks for (checked by checkValues).
func (f *fresh) permissions() harness.PermissionMode {
	m, _ := harness.ParsePermissionMode(f.req.Permissions)
	return m
}

// restoreBrief undoes placeBrief for a launch that failed: the brief it
// went over is put back, and one it made is removed.
func (f *fresh) restoreBrief() {
	switch {
	case f.req.Brief == "":
	case f.hadBrief:
		_ = state.WriteAtomic(f.brief, f.priorBrief)
	default:
		_ = state.RemoveIfExists(f.brief)
		_ = os.Remove(filepath.Dir(f.brief)) // only if empty
	}
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
	add(state.KeyModel, launch.OrDefault(model))
	add(state.KeyEffort, launch.OrDefault(effort))
	add(state.KeySpawnGen, gen)
	if backend != state.DefaultBackend {
		add(state.KeyBackend, backend)
	}
	for _, f := range extra {
		add(f.Key, f.Value)
	}
	return r
}
