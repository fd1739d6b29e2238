package spawn

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"fmctl/backends"
	"fmctl/backends/mux"
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
	action, orphan, err := s.launcher().SettleIntent(ctx, store, req.ID)
	if err != nil {
		return err
	}
	s.noteIntent(req.ID, action, orphan)
	if err := s.refuseDuplicate(ctx, home, store, req.ID); err != nil {
		return err
	}
	// A labelled window no record names (an fm-spawn killed before intents
	// existed, or one made by hand) is settled like an interrupted spawn.
	if _, err := os.Lstat(store.MetaPath(req.ID)); mux.SettlesByLabel(be.Name()) && errors.Is(err, fs.ErrNotExist) {
		window := where + ":" + state.Label(req.ID)
		act, err := launch.SettleOrphan(ctx, be, req.ID, window, wt)
		var e *fault.Error
		if errors.As(err, &e) {
			// No intent names it, so recover has nothing to settle.
			e.Hint("then spawn again: a spawn removes an agent-free window there")
		}
		if err != nil {
			return err
		}
		if act == launch.IntentRemoved {
			s.noteIntent(req.ID, act, window)
		}
	}
	sharers, err := s.launcher().RefuseSharedWorktree(ctx, store, req.ID, wt, req.SharedWorktree, false)
	if err != nil {
		return err
	}
	return launch.RefuseOccupied(ctx, be, req.ID, wt, sharers)
}

// noteIntent tells the caller what settling an intent did.
func (s Spawner) noteIntent(id, action, window string) {
	switch action {
	case launch.IntentRemoved:
		s.Print.Notice("%s: removed agent-free window %s left by an interrupted fm-spawn", id, window)
	case launch.IntentCleared:
		s.Print.Notice("%s: cleared the intent of an interrupted fm-spawn (its window %s no longer exists)", id, window)
	case launch.IntentAdopted:
		s.Print.Notice("%s: an interrupted fm-spawn had published the record for %s; it is the task's endpoint", id, window)
	}
}
