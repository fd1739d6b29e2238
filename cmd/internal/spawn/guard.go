package spawn

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/config"
	"fmctl/state"
)

// guardFresh makes sure a fresh launch of req.ID into wt cannot put a
// second agent anywhere: it settles what an interrupted spawn left, refuses
// a recorded endpoint that still exists, settles a labelled window no record
// names, and refuses a worktree another agent works in.
func (s Spawner) guardFresh(ctx context.Context, home config.Home, store state.Store, be backends.Backend, req Request, where, wt string) error {
	action, orphan, err := s.SettleIntent(ctx, store, req.ID)
	if err != nil {
		return err
	}
	s.noteIntent(req.ID, action, orphan)
	if err := s.refuseDuplicate(ctx, home, store, req.ID); err != nil {
		return err
	}
	// A labelled window no record names (an fm-spawn killed before intents
	// existed, or one made by hand) is settled like an interrupted spawn.
	if _, err := os.Lstat(store.MetaPath(req.ID)); backends.SettlesByLabel(be.Name()) && errors.Is(err, fs.ErrNotExist) {
		window := where + ":" + state.Label(req.ID)
		act, err := settleOrphan(ctx, be, req.ID, window, wt)
		if err != nil {
			return err
		}
		if act == IntentRemoved {
			s.noteIntent(req.ID, act, window)
		}
	}
	sharers, err := s.refuseSharedWorktree(ctx, store, req.ID, wt, req.SharedWorktree)
	if err != nil {
		return err
	}
	return refuseOccupied(ctx, be, req.ID, wt, sharers)
}

// runsAgent is what counts as an agent already working somewhere: a stopped
// agent is still one, and would come back beside the new one.
func runsAgent(obs backends.Observation) bool {
	return obs.State == backends.StateAlive || obs.State == backends.StateSuspended
}

// refuseOccupied keeps one agent per task: no launch while any pane on the
// backend's server runs an agent in the worktree. ignore skips panes that
// belong to other tasks deliberately sharing it (--shared-worktree).
func refuseOccupied(ctx context.Context, be backends.Backend, id, wt string, ignore map[string]bool) error {
	pf, ok := be.(backends.PaneFinder)
	if !ok {
		return nil
	}
	panes, err := pf.PanesIn(ctx, wt)
	if err != nil {
		return cli.Failed("cannot prove that no agent already works in task %s's worktree %s: %v; nothing was launched", id, wt, err).Coded(cli.EWorktreeInUse)
	}
	var busy []string
	for _, p := range panes {
		if runsAgent(p.Obs) && !ignore[p.Label] {
			busy = append(busy, fmt.Sprintf("%s (%s)", p.Describe(), p.Obs.Detail))
		}
	}
	if len(busy) == 0 {
		return nil
	}
	return cli.Failed("an agent already runs in task %s's worktree %s: %s; refusing to start a second one. If it is %s's own agent whose endpoint was renamed or moved, re-point the record with fm-control rebind %s", id, wt, strings.Join(busy, ", "), id, id).Coded(cli.EWorktreeInUse)
}

// liveSharers returns the other tasks in this home whose record names the
// same worktree and whose endpoint still exists with something in it that
// is not a bare shell, keyed by their label.
func (s Spawner) liveSharers(ctx context.Context, store state.Store, id, wt string) (map[string]string, error) {
	entries, err := os.ReadDir(store.Dir)
	if err != nil {
		return nil, cli.Failed("cannot read %s to check which tasks use %s: %v", store.Dir, wt, err)
	}
	want := backends.SameDirKey(wt)
	live := map[string]string{}
	for _, e := range entries {
		other, ok := strings.CutSuffix(e.Name(), ".meta")
		if !ok || other == id || !state.ValidTaskID(other) {
			continue
		}
		task, err := store.LoadTask("fm-spawn", other)
		if err != nil || backends.SameDirKey(task.Record.Worktree()) != want {
			continue
		}
		obs := s.observe(ctx, task)
		if obs.State != backends.StateMissing && obs.State != backends.StateDead {
			live[state.Label(other)] = fmt.Sprintf("%s (%s, %s)", other, task.Record.Window(), obs.State)
		}
	}
	return live, nil
}

// observe reads a recorded task's endpoint state.
func (s Spawner) observe(ctx context.Context, task *state.Task) backends.Observation {
	name := task.Record.Backend()
	be, err := backends.Open(name, s.Runner, backends.Env(s.Env))
	if err != nil {
		return backends.Observation{State: backends.StateUnreadable, Detail: err.Error()}
	}
	return be.AgentState(ctx, backends.RecordEndpoint(task.ID, task.Record))
}

// refuseSharedWorktree refuses a worktree a live task in this home already
// uses, unless the caller said the sharing is deliberate. It returns the
// sharers' labels, which the one-agent check then leaves alone.
func (s Spawner) refuseSharedWorktree(ctx context.Context, store state.Store, id, wt string, shared bool) (map[string]bool, error) {
	live, err := s.liveSharers(ctx, store, id, wt)
	if err != nil {
		return nil, err
	}
	if len(live) > 0 && !shared {
		var names []string
		for _, v := range live {
			names = append(names, v)
		}
		return nil, cli.Failed("worktree %s is already used by live task %s; give task %s its own worktree, or pass --shared-worktree if two tasks are meant to work in one copy", wt, strings.Join(names, ", "), id).Coded(cli.EWorktreeInUse)
	}
	ignore := map[string]bool{}
	for label := range live {
		ignore[label] = true
	}
	return ignore, nil
}

// intentBody is what a fresh spawn writes before it creates an endpoint, so
// a spawn killed between creating the window and publishing the record
// leaves a trace that recover (and the next spawn) can settle.
func intentBody(id, backend, container, wt string) []byte {
	return []byte(fmt.Sprintf("task=%s\nbackend=%s\ncontainer=%s\nlabel=%s\nworktree=%s\npid=%d\n", id, backend, container, state.Label(id), wt, os.Getpid()))
}

func writeIntent(store state.Store, id, backend, container, wt string) error {
	if err := state.WriteAtomic(store.SpawnIntentPath(id), intentBody(id, backend, container, wt)); err != nil {
		return cli.Failed("task %s's spawn intent %s could not be written: %v; nothing was created", id, store.SpawnIntentPath(id), err)
	}
	return nil
}
