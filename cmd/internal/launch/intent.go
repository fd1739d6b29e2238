package launch

// A fresh fm-spawn writes an intent before it creates an endpoint, so one
// killed between creating the window and publishing the record leaves a
// trace. The next fm-spawn of the id and fm-control recover both settle it,
// through this one owner.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"fmctl/backends"
	"fmctl/backends/mux"
	"fmctl/cmd/internal/fault"
	"fmctl/state"
)

// Intent settlement outcomes.
const (
	IntentNone    = "none"    // no intent was left
	IntentCleared = "cleared" // the intent named no endpoint that exists
	IntentAdopted = "adopted" // the record was published: the endpoint is the task's
	IntentRemoved = "removed" // an agent-free orphan endpoint was removed
)

// SettleIntent settles the spawn intent a killed fresh fm-spawn left behind.
// The caller holds the task's lifecycle lock. An orphan endpoint (created,
// never recorded) is removed only when it is provably agent-free and in the
// worktree it was made for; one running an agent is never touched.
func (l Launcher) SettleIntent(ctx context.Context, store state.Store, id string) (action, window string, err error) {
	path := store.SpawnIntentPath(id)
	data, err := state.ReadSmallFile(path, state.MaxRecordBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return IntentNone, "", nil
	}
	if err != nil {
		return "", "", fault.Failed("task %s's spawn intent %s cannot be read: %v", id, path, err).Coded(fault.ETornSpawn).Hint("inspect it, then remove it")
	}
	intent, err := state.ParseRecord(data)
	if err != nil || intent.Get("task") != id {
		return "", "", fault.Failed("task %s's spawn intent %s is malformed", id, path).Coded(fault.ETornSpawn).Hint("inspect it, then remove it")
	}
	backend, wt := intent.Get(state.KeyBackend), intent.Worktree()
	window = intent.Get("container") + ":" + state.Label(id)
	if !mux.SettlesByLabel(backend) {
		return "", "", fault.Failed("task %s's spawn on %s was interrupted (intent %s); fmctl can settle only a tmux spawn", id, backend, path).Coded(fault.ETornSpawn).
			Hint("check that backend for an endpoint %s, then remove the intent", state.Label(id))
	}
	if task, err := store.LoadTask("fm-spawn", id); err == nil && task.Record.Window() == window {
		return IntentAdopted, window, removeIntent(store, id)
	}
	be, err := mux.Open(backend, l.Runner, backends.Env(l.Env), l.Tunables.Mux)
	if err != nil {
		return "", "", fault.Failed("%w", err)
	}
	action, err = SettleOrphan(ctx, be, id, window, wt)
	var e *fault.Error
	if errors.As(err, &e) {
		e.Hint("then settle the intent: fm-control recover %s, or spawn again", id)
	}
	if err != nil {
		return "", "", err
	}
	return action, window, removeIntent(store, id)
}

// SettleOrphan deals with a window labelled for task id that no record
// names: gone is fine, an agent-free shell in the worktree it was made for is
// removed, and anything else (an agent above all) is left alone and refused.
func SettleOrphan(ctx context.Context, be backends.Backend, id, window, wt string) (string, error) {
	ep := backends.Endpoint{Backend: be.Name(), Target: window, TaskID: id, Worktree: wt, Fields: map[string]string{}}
	obs := be.AgentState(ctx, ep)
	switch {
	case obs.State == backends.StateMissing, obs.NoServer:
		return IntentCleared, nil
	case obs.State == backends.StateDead && backends.SameDirKey(obs.CurrentPath) == backends.SameDirKey(wt):
		if err := be.Kill(ctx, ep); err != nil {
			return "", fault.Failed("task %s's orphan window %s could not be removed: %v", id, window, err).Coded(fault.ETornSpawn)
		}
		return IntentRemoved, nil
	}
	return "", fault.Failed("window %s carries task %s's label, but no record names it and it reads '%s', not an agent-free shell; fmctl will not remove it", window, id, obs.State).Coded(fault.ETornSpawn).
		With("detail", obs.Detail).Hint("it shows %s; only an agent-free shell in %s is removed", obs.Detail, wt).
		Hint("an interrupted spawn left it, or it was made by hand: stop or close it yourself")
}

func removeIntent(store state.Store, id string) error {
	if err := state.RemoveIfExists(store.SpawnIntentPath(id)); err != nil {
		return fault.Failed("task %s's spawn intent could not be removed: %v", id, err)
	}
	return nil
}

// intentBody is what a fresh spawn writes before it creates an endpoint.
func intentBody(id, backend, container, wt string) []byte {
	return []byte(fmt.Sprintf("task=%s\nbackend=%s\ncontainer=%s\nlabel=%s\nworktree=%s\npid=%d\n", id, backend, container, state.Label(id), wt, os.Getpid()))
}

// WriteIntent records, before a fresh spawn creates task id's endpoint in
// container on backend, what settling it would need.
func WriteIntent(store state.Store, id, backend, container, wt string) error {
	if err := state.WriteAtomic(store.SpawnIntentPath(id), intentBody(id, backend, container, wt)); err != nil {
		return fault.Failed("task %s's spawn intent %s could not be written: %v; nothing was created", id, store.SpawnIntentPath(id), err)
	}
	return nil
}
