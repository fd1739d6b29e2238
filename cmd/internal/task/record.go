package task

import (
	"path/filepath"

	"fmctl/backends"
	"fmctl/backends/proc"
	"fmctl/backends/sqlite"
	"fmctl/config"
	"fmctl/harness/records"
)

// LocateRecordsBy has t look for the agent's record as Opener.Load's
// targets do: under env's HOME, with runner for a database record. For a
// Target built by hand (a test's), which otherwise finds no record.
func (t *Target) LocateRecordsBy(env config.Env, runner backends.Runner) {
	t.env, t.runner = env, runner
}

// AgentRecord opens the agent's own record (its transcript, rollout,
// database or session file) for the live agent obs observed, where the
// harness keeps one fmctl can read. The record is found where the agent
// process runs: its HOME and its directory from /proc. Without the process
// (a backend that does not read the endpoint's processes), it is looked
// for under the caller's HOME and the pane's directory: a wrong guess
// there finds nothing and confirms nothing, while a message found in that
// worktree's record after the send was received by this task's agent, the
// only agent that worktree has.
func (t *Target) AgentRecord(obs backends.Observation) (records.Reader, bool) {
	if !t.HasHarness || !records.Has(t.Harness.Name) {
		return nil, false
	}
	where := records.Where{Query: sqlite.Query(t.runner)}
	if place, err := proc.ReadAgentPlace("/proc", obs.AgentPID); err == nil {
		where.Home, where.Worktree = place.Home, place.Dir
	} else {
		// The multiplexer's current path of the pane is the agent's own
		// directory; the recorded worktree is where it was launched.
		wt := obs.CurrentPath
		if wt == "" {
			wt = t.Task.Record.Worktree()
		}
		if resolved, err := filepath.EvalSymlinks(wt); err == nil {
			wt = resolved
		}
		if t.env != nil {
			where.Home = t.env("HOME")
		}
		where.Worktree = wt
	}
	if where.Home == "" || where.Worktree == "" {
		return nil, false
	}
	where.Since, _ = t.Task.Record.SpawnedAt()
	r, err := records.For(t.Harness.Name, where)
	return r, err == nil
}

// LiveTurn is how the live agent's newest turn stands in its record r
// (records.LastTurn, from the agent's launch): its end, whether it ended,
// and whether the record holds a turn of its at all. A record that keeps
// no conversation (no records.Transcript), or could not be read, holds
// none.
func (t *Target) LiveTurn(r any) (end records.Entry, ended, found bool) {
	tr, ok := r.(records.Transcript)
	if !ok {
		return records.Entry{}, false, false
	}
	entries, err := tr.Entries()
	if err != nil {
		return records.Entry{}, false, false
	}
	since, _ := t.Task.Record.SpawnedAt()
	return records.LastTurn(entries, since)
}

// TurnEndedSinceLaunch reports whether the live agent's record r shows a
// turn of its own ended, and whether r could tell at all: no turn ended
// since the launch means the turn running, if one is, is its first, the
// launch prompt's.
func (t *Target) TurnEndedSinceLaunch(r any) (ended, known bool) {
	tr, ok := r.(records.Transcript)
	if !ok {
		return false, false
	}
	entries, err := tr.Entries()
	if err != nil {
		return false, false
	}
	since, _ := t.Task.Record.SpawnedAt()
	for _, e := range entries {
		if e.Kind == records.EntryTurnEnd && !e.Time.Before(since) {
			return true, true
		}
	}
	return false, true
}
