package control

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/state"
)

// Recover settles a relaunch journal left mid-transaction by a process that
// died: it either finishes the transaction (the new record is published and
// its agent is alive) or rolls back exactly as a live failure at that phase
// would have, and says which. A spawn intent and a teardown journal are
// settled by their own owners (launch.Launcher.SettleIntent, retire.Tx.Resume).
func (c *Controller) Recover(ctx context.Context, id string) error {
	home, err := c.tasks().Begin(id)
	if err != nil {
		return err
	}
	store := state.Store{Dir: home.State}
	if exists(store.SpawnIntentPath(id)) {
		return c.recoverSpawn(ctx, store, id)
	}
	if exists(store.TeardownPath(id)) {
		return c.recoverTeardown(ctx, home, store, id)
	}
	if _, err := os.Lstat(store.Journal(id).Journal); errors.Is(err, fs.ErrNotExist) {
		// With neither a journal nor a record the id names no task: a
		// typo must not read as "nothing to recover" and exit 0.
		if !exists(store.MetaPath(id)) {
			_, err := store.LoadTask("fm-control", id)
			return err
		}
		out := cli.Outcome{Word: "nothing-to-recover", ID: id}
		c.print.Outcome(*out.Add("journal", "none"))
		return nil
	}
	lock, err := lockTorn(store, id, "relaunch")
	if err != nil {
		return err
	}
	defer lock.Release()
	paths := store.Journal(id)
	j, err := state.ReadJournal(paths.Journal)
	if errors.Is(err, fs.ErrNotExist) {
		out := cli.Outcome{Word: "nothing-to-recover", ID: id}
		c.print.Outcome(*out.Add("journal", "none"))
		return nil
	}
	if err != nil {
		return fault.Failed("task %s's relaunch journal cannot be read: %v", id, err)
	}
	if state.Settled(j.Phase) {
		out := cli.Outcome{Word: "settled", ID: id}
		out.Add("phase", j.Phase)
		if r := j.Extra.Get(state.JournalRollback); r != "" {
			out.Add("rollback", r)
		}
		c.print.Outcome(out)
		return nil
	}
	t, err := c.tasks().Load(home, id)
	if err != nil {
		return err
	}
	phase := j.Phase
	toHarness := j.ToHarness()
	of := outcomeFacts{}
	if phase == state.PhaseLaunching {
		of.tx = j.Extra.Get(state.JournalRelaunchTx)
		if of.tx != "" && t.Task.Record.ControlRelaunchTx() == of.tx {
			if obs := t.Backend.AgentState(ctx, t.Endpoint); obs.State == backends.StateAlive {
				return c.rollForward(j, paths, t)
			}
		}
	}
	s := settle(ctx, t, paths, phase, toHarness, of)
	j.Phase = state.FailedPrefix + phase
	j.Extra = state.Record{Entries: []state.Entry{{Key: state.JournalRollback, Value: s.Rollback}, {Key: state.JournalRecovered, Value: "yes"}}}
	if err := state.WriteJournal(paths.Journal, j); err != nil {
		return fault.Failed("task %s's torn relaunch was settled (%s) but the journal could not record it: %v", id, s.Rollback, err)
	}
	agent := t.Backend.AgentState(ctx, t.Endpoint)
	out := cli.Outcome{Word: "recovered", ID: id}
	out.Add("phase", phase).Put(result("rolled-back")).Add("rollback", s.Rollback).Add("agent", string(agent.State))
	c.print.Outcome(out)
	c.print.Notice("%s", s.Sentence)
	return nil
}

// rollForward completes a transaction whose new record and agent are both in
// place: only the journal's last write was lost.
func (c *Controller) rollForward(j state.Journal, paths state.JournalPaths, t *task.Target) error {
	j.Phase = state.PhaseComplete
	j.Extra.Set(state.JournalReady, "confirmed")
	j.Extra.Set(state.JournalRecovered, "yes")
	if err := state.WriteJournal(paths.Journal, j); err != nil {
		return fault.Failed("task %s's relaunch is complete on disk but its journal could not record it: %v", t.ID, err)
	}
	out := cli.Outcome{Word: "recovered", ID: t.ID}
	out.Add("phase", state.PhaseLaunching).Put(result("completed")).Add("harness", t.Task.Record.Harness()).Add("ready", "confirmed").Add("agent", "alive")
	c.print.Outcome(out)
	return nil
}

// recoverSpawn settles what a killed fresh fm-spawn left: an orphan window
// with no record is removed when it is provably agent-free, adopted when
// the record was published, and never touched when it runs an agent.
func (c *Controller) recoverSpawn(ctx context.Context, store state.Store, id string) error {
	lock, err := store.LockTask(id)
	if err != nil && !errors.Is(err, state.ErrLockHeld) {
		return err // the lock file cannot be opened (a symlink, a directory)
	}
	if err != nil {
		return fault.Failed("a lifecycle action still holds task %s's lock, so its spawn is not interrupted; recover only settles a spawn whose process has died", id).Coded(fault.ELockHeld)
	}
	defer lock.Release()
	action, window, err := c.launcher().SettleIntent(ctx, store, id)
	if err != nil {
		return err
	}
	out := cli.Outcome{Word: "recovered", ID: id}
	out.Add("spawn", action).Add("window", window)
	c.print.Outcome(out)
	if exists(store.Journal(id).Journal) {
		c.print.Notice("task %s also has a relaunch journal; run fm-control recover %s again to settle it", id, id)
	}
	return nil
}

// lockTorn takes task id's lifecycle lock without waiting: a holder is a
// transaction (what) still running, which recover must leave alone.
func lockTorn(store state.Store, id, what string) (*state.Lock, error) {
	lock, held, err := state.TryLock(store.LockPath(id))
	if err != nil {
		return nil, fault.Failed("cannot take task %s's lifecycle lock: %v", id, err)
	}
	if !held {
		return nil, fault.Failed("a lifecycle action still holds task %s's lock, so its %s is not torn; recover only settles a transaction whose process has died", id, what).Coded(fault.ELockHeld)
	}
	return lock, nil
}

// result is what recover did with a torn relaunch: `outcome=` in the text
// line, whose tokens predate --json, and "result" in JSON, where "outcome"
// is the object's own word (recovered).
func result(r string) fault.Fact { return fault.Str("result", r).TokenAs("outcome") }

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
