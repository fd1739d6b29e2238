package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/backends/mux"
	"fmctl/cmd/internal/fault"
	"fmctl/state"
)

// The guards keep one agent per task and per worktree: a launch, fresh or
// a relaunch, never starts an agent beside one that already works there.

// runsAgent is what counts as an agent already working somewhere: a stopped
// agent is still one, and would come back beside the new one.
func runsAgent(obs backends.Observation) bool {
	return obs.State == backends.StateAlive || obs.State == backends.StateSuspended
}

// RefuseOccupied refuses a launch while any pane on the backend's server
// runs an agent in the worktree. ignore skips panes that belong to other
// tasks deliberately sharing it (--shared-worktree).
func RefuseOccupied(ctx context.Context, be backends.Backend, id, wt string, ignore map[string]bool) error {
	pf, ok := be.(backends.PaneFinder)
	if !ok {
		return nil
	}
	panes, err := pf.PanesIn(ctx, wt)
	if err != nil {
		return fault.Failed("cannot prove that no agent already works in task %s's worktree %s: %v; nothing was launched", id, wt, err).Coded(fault.EWorktreeInUse)
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
	return fault.Failed("an agent already runs in task %s's worktree %s: %s; refusing to start a second one", id, wt, strings.Join(busy, ", ")).Coded(fault.EWorktreeInUse).
		Hint("if it is %s's own agent whose endpoint was renamed or moved, re-point the record: fm-control rebind %s", id, id)
}

// LockWorktree takes the lock a launch (fresh or a relaunch) holds on its
// worktree from its guards until its agent is up, and waits for another
// launch holding it.
// The guards read records and panes, so two launches of different tasks
// into one worktree at once would each pass them before the other's agent
// ran, and both start; the second instead sees the first's agent. The
// holder keeps it for at most its launch wait, and a margin covers the rest.
func (l Launcher) LockWorktree(store state.Store, id, wt string) (*state.Lock, error) {
	wait := l.launchWait() + 30*time.Second
	lock, err := state.WaitLock(store.WorktreeLockPath(backends.SameDirKey(wt)), wait)
	if errors.Is(err, state.ErrLockHeld) {
		return nil, state.Errorf(state.ErrLockHeld, "another launch into worktree %s was still under way after %s; see which task it was (fm-control list), then launch %s again", wt, wait.Round(time.Second), id)
	}
	if err != nil {
		return nil, fault.Failed("task %s's worktree lock cannot be taken: %v; nothing was launched", id, err)
	}
	return lock, nil
}

// RefuseSharedWorktree refuses a worktree a live task in this home already
// uses, unless the caller said the sharing is deliberate (shared:
// --shared-worktree, or a relaunched record that says it joined one). A
// relaunch also leaves alone a sharer whose own record says it joined on
// purpose; one that joined while this task's agent was gone asked nobody.
// It returns the sharers' labels, which RefuseOccupied then leaves alone.
func (l Launcher) RefuseSharedWorktree(ctx context.Context, store state.Store, id, wt string, shared, relaunch bool) (map[string]bool, error) {
	live, err := l.liveSharers(ctx, store, id, wt)
	if err != nil {
		return nil, err
	}
	ignore := map[string]bool{}
	var names, ids []string
	for label, s := range live {
		if shared || (relaunch && s.joined) {
			ignore[label] = true
		} else {
			names = append(names, s.desc)
			ids = append(ids, s.id)
		}
	}
	slices.Sort(names)
	slices.Sort(ids)
	switch {
	case len(names) > 0 && relaunch:
		e := fault.Failed("worktree %s is also used by live task %s, which did not join it with --shared-worktree; refusing to relaunch %s beside its agent", wt, strings.Join(names, ", "), id).Coded(fault.EWorktreeInUse)
		for _, other := range ids {
			e.Hint("stop that agent first: fm-control exit %s", other)
		}
		return nil, e.Hint("or give one of the tasks its own worktree")
	case len(names) > 0:
		return nil, fault.Failed("worktree %s is already used by live task %s", wt, strings.Join(names, ", ")).Coded(fault.EWorktreeInUse).
			Hint("give task %s its own worktree", id).
			Hint("or pass --shared-worktree if two tasks are meant to work in one copy")
	}
	return ignore, nil
}

// sharer is another live task in a worktree: how to name it, and whether
// its record says it joined the worktree on purpose.
type sharer struct {
	id     string
	desc   string
	joined bool
}

// liveSharers returns the other tasks in this home whose record names the
// same worktree and whose endpoint still exists with something in it that
// is not a bare shell, keyed by their label.
func (l Launcher) liveSharers(ctx context.Context, store state.Store, id, wt string) (map[string]sharer, error) {
	entries, err := os.ReadDir(store.Dir)
	if err != nil {
		return nil, fault.Failed("cannot read %s to check which tasks use %s: %v", store.Dir, wt, err)
	}
	want := backends.SameDirKey(wt)
	live := map[string]sharer{}
	for _, e := range entries {
		other, ok := strings.CutSuffix(e.Name(), ".meta")
		if !ok || other == id || !state.ValidTaskID(other) {
			continue
		}
		task, err := store.LoadTask(l.Tool, other)
		if err != nil || backends.SameDirKey(task.Record.Worktree()) != want {
			continue
		}
		obs := l.Observe(ctx, task)
		if obs.State != backends.StateMissing && obs.State != backends.StateDead {
			live[state.Label(other)] = sharer{id: other, desc: fmt.Sprintf("%s (%s, %s)", other, task.Record.Window(), obs.State), joined: task.Record.SharedWorktree()}
		}
	}
	return live, nil
}

// Observe reads a recorded task's endpoint state, on the backend its record
// names; a backend that cannot be opened reads unreadable.
func (l Launcher) Observe(ctx context.Context, task *state.Task) backends.Observation {
	be, err := mux.Open(task.Record.Backend(), l.Runner, backends.Env(l.Env), l.Tunables.Mux)
	if err != nil {
		return backends.Observation{State: backends.StateUnreadable, Detail: err.Error()}
	}
	return be.AgentState(ctx, backends.RecordEndpoint(task.ID, task.Record))
}
