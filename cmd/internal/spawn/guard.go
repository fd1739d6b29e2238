package spawn

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"fmctl/backends"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/launch"
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
	sharers, err := s.launcher().RefuseSharedWorktree(ctx, store, req.ID, wt, req.SharedWorktree, false)
	if err != nil {
		return err
	}
	return launch.RefuseOccupied(ctx, be, req.ID, wt, sharers)
}

// intentBody is what a fresh spawn writes before it creates an endpoint, so
// a spawn killed between creating the window and publishing the record
// leaves a trace that recover (and the next spawn) can settle.
func intentBody(id, backend, container, wt string) []byte {
	return []byte(fmt.Sprintf("task=%s\nbackend=%s\ncontainer=%s\nlabel=%s\nworktree=%s\npid=%d\n", id, backend, container, state.Label(id), wt, os.Getpid()))
}

func writeIntent(store state.Store, id, backend, container, wt string) error {
	if err := state.WriteAtomic(store.SpawnIntentPath(id), intentBody(id, backend, container, wt)); err != nil {
		return fault.Failed("task %s's spawn intent %s could not be written: %v; nothing was created", id, store.SpawnIntentPath(id), err)
	}
	return nil
}
