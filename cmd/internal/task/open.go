package task

import (
	"errors"
	"io/fs"
	"os"

	"fmctl/backends"
	"fmctl/config"
	"fmctl/phrase"
	"fmctl/state"
)

// Opener is how every verb opens a task: the same refusals in the same
// order (home, id shape, lock, record, identity, kind, backend), each
// naming Tool, the binary the user ran.
type Opener struct {
	Tool     string
	Env      config.Env
	Tunables config.Tunables
	Runner   backends.Runner
}

// Begin resolves the home and checks id's shape: the refusals every verb
// makes before it reads a record or takes a lock.
func (o Opener) Begin(id string) (config.Home, error) {
	return o.begin(config.ResolveHome, id, state.CheckTaskArg)
}

// BeginNew is Begin for an id a new task is to take (fm-spawn), which must
// also not look like an endpoint label. Its home may not be set up yet (a
// first spawn sets it up once the whole command line is checked).
func (o Opener) BeginNew(id string) (config.Home, error) {
	return o.begin(config.LocateHome, id, state.CheckNewTaskID)
}

func (o Opener) begin(locate func(string, config.HomeVars) (config.Home, error), id string, check func(tool, id string) error) (config.Home, error) {
	home, err := locate(o.Tool, o.Tunables.Home)
	if err != nil {
		return config.Home{}, err
	}
	if err := check(o.Tool, id); err != nil {
		return config.Home{}, err
	}
	return home, nil
}

// Open resolves task id for a verb that only reads or delivers (status,
// wait, read; fm-send takes its input lock itself): no lifecycle lock, so it
// never waits on or blocks a lifecycle action.
func (o Opener) Open(id string) (*Target, error) {
	home, err := o.Begin(id)
	if err != nil {
		return nil, err
	}
	return o.Load(home, id)
}

// OpenLocked resolves task id under its lifecycle lock, for a verb that
// changes the agent. The lock comes before the record is read, so nothing
// read can change under the verb; the caller releases it. On a load error
// the lock is already released, and the partial target (when there is one)
// still says what the record holds, for a refusal by backend ability.
func (o Opener) OpenLocked(id string) (*Target, *state.Lock, error) {
	home, err := o.Begin(id)
	if err != nil {
		return nil, nil, err
	}
	store := state.Store{Dir: home.State}
	// An id with no record and no lock file is refused before a lock file
	// is created, so stray ids leave nothing behind in state/. A held lock
	// always has its file, so the lock refusal still comes first.
	if !exists(store.MetaPath(id)) && !exists(store.LockPath(id)) {
		_, err := loadTask(store, o.Tool, id)
		return nil, nil, err
	}
	lock, err := store.LockTask(id)
	if err != nil {
		return nil, nil, err
	}
	t, err := o.Load(home, id)
	if err != nil {
		lock.Release()
		return t, nil, err
	}
	return t, lock, nil
}

// LockLaunch takes task id's lifecycle lock for a launch and, under it,
// refuses a relaunch journal left torn by a process that died: a launch
// over it would replace the record and brief its rollback restores, so
// fm-control recover settles it first. The caller releases the lock.
func LockLaunch(store state.Store, id string) (*state.Lock, error) {
	lock, err := store.LockTask(id)
	if err != nil {
		return nil, err
	}
	if err := store.RefuseTorn(id); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// loadTask is store.LoadTask, naming the recorded id probably meant when
// id names no record (tt1 for t1).
func loadTask(store state.Store, tool, id string) (*state.Task, error) {
	t, err := store.LoadTask(tool, id)
	if errors.Is(err, state.ErrNoSuchTask) {
		if s := phrase.DidYouMean(id, store.TaskIDs()); s != "" {
			return nil, state.Errorf(state.ErrNoSuchTask, "%w%s", err, s)
		}
	}
	return t, err
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
