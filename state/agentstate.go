package state

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
)

// Agent-state file states: what the agent itself last reported through its
// telemetry (hooks, notify, plugin, extension). docs/agent-state.md is the
// contract the writer and every reader share.
const (
	AgentReady   = "ready"   // session started, composer up, no turn yet
	AgentBusy    = "busy"    // a turn is running
	AgentIdle    = "idle"    // the turn finished; the composer takes input
	AgentWaiting = "waiting" // blocked on the user (permission, question)
	AgentEnded   = "ended"   // the session ended
)

var agentStates = []string{AgentReady, AgentBusy, AgentIdle, AgentWaiting, AgentEnded}

// maxAgentStateBytes bounds the file: five short lines.
const maxAgentStateBytes = 4096

// AgentStatePath is task id's telemetry file.
func (s Store) AgentStatePath(id string) string { return filepath.Join(s.Dir, id+".agent-state") }

// AgentReport is one read of state/<id>.agent-state.
type AgentReport struct {
	State   string    // one of the Agent* states
	Gen     string    // the spawn_gen of the incarnation that wrote it
	Event   string    // the telemetry event that set State
	At      time.Time // when the writer recorded it
	Harness string    // the harness that reported
}

// ReadAgentState reads task id's telemetry file without following a link.
// An absent file is fs.ErrNotExist; anything that is not the contract's
// shape (unknown state, no gen, a bad time) is an error, never a guess.
func (s Store) ReadAgentState(id string) (AgentReport, error) {
	path := s.AgentStatePath(id)
	data, err := ReadSmallFile(path, maxAgentStateBytes)
	if err != nil {
		return AgentReport{}, err
	}
	rec, err := ParseRecord(data)
	if err != nil {
		return AgentReport{}, fmt.Errorf("%s is malformed: %w", path, err)
	}
	r := AgentReport{State: rec.Get("state"), Gen: rec.Get("gen"), Event: rec.Get("event"), Harness: rec.Get("harness")}
	if !validAgentState(r.State) {
		return AgentReport{}, fmt.Errorf("%s has state=%s, not one of %s", path, printable(r.State), strings.Join(agentStates, ", "))
	}
	if r.Gen == "" {
		return AgentReport{}, fmt.Errorf("%s has no gen=; an event cannot be tied to an incarnation without it", path)
	}
	if at := rec.Get("at"); at != "" {
		if r.At, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return AgentReport{}, fmt.Errorf("%s has at=%s, not an RFC 3339 time", path, printable(at))
		}
	}
	return r, nil
}

func validAgentState(s string) bool {
	for _, v := range agentStates {
		if s == v {
			return true
		}
	}
	return false
}

// CurrentAgentReport returns the telemetry of the incarnation the record
// names (its spawn_gen=): ok is false when there is none, when the file is
// a previous incarnation's (a late event of a stopped agent), or when the
// record has no spawn_gen to compare with. err is set only for a file that
// exists and cannot be read.
func (s Store) CurrentAgentReport(id string, rec Record) (r AgentReport, ok bool, err error) {
	r, err = s.ReadAgentState(id)
	if errors.Is(err, fs.ErrNotExist) {
		return AgentReport{}, false, nil
	}
	if err != nil {
		return AgentReport{}, false, err
	}
	gen := rec.Get("spawn_gen")
	if gen == "" || r.Gen != gen {
		return r, false, nil
	}
	return r, true, nil
}

// Activity is what a reader shows of a current report: busy, idle (ready or
// idle: no turn runs), waiting; an ended session says nothing about a turn.
func (r AgentReport) Activity() string {
	switch r.State {
	case AgentBusy, AgentWaiting:
		return r.State
	case AgentReady, AgentIdle:
		return AgentIdle
	}
	return ActivityUnknown
}

// ActivityUnknown is the activity of a task with no current telemetry.
const ActivityUnknown = "unknown"
