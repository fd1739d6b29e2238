package state

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// The agent-state file (state/<id>.agent-state) is what the agent itself
// reports through its harness's hooks, via `fm-control agent-event` (a
// hook run through bash reports into the events directory instead,
// agentevents.go). It is
// one key=value per line:
//
//	state=ready|busy|idle|waiting|ended
//	gen=<the record's spawn_gen when the wiring was installed>
//	event=<the allowlisted event name>
//	at=<RFC3339Nano>
//	harness=<name>
//
// Readers use it only when gen is the record's current spawn_gen: a stale
// incarnation's file says nothing about the agent that runs now.

// Agent activity states, as written in the file.
const (
	ActivityReady   = "ready"
	ActivityBusy    = "busy"
	ActivityIdle    = "idle"
	ActivityWaiting = "waiting"
	ActivityEnded   = "ended"
	// ActivityUnknown is never written: it is what a reader reports when
	// no current telemetry exists.
	ActivityUnknown = "unknown"
)

// EventTurnCancelled is written by fmctl itself, never by a hook: an
// interrupt whose turn end the agent's own record showed (a harness that
// reports no cancelled turn would otherwise read busy until its next
// prompt). It is not in the allowlist agent-event accepts.
const EventTurnCancelled = "turn-cancelled"

// agentEvents is the closed allowlist of events the entry point accepts,
// each with the activity it records.
var agentEvents = map[string]string{
	"session-start":    ActivityReady,
	"prompt-submitted": ActivityBusy,
	"turn-finished":    ActivityIdle,
	"waiting":          ActivityWaiting,
	"session-end":      ActivityEnded,
}

// AgentEventNames lists the allowlisted events, in lifecycle order.
func AgentEventNames() []string {
	return []string{"session-start", "prompt-submitted", "turn-finished", "waiting", "session-end"}
}

// AgentEventState maps an allowlisted event to the activity it records.
func AgentEventState(event string) (string, bool) {
	s, ok := agentEvents[event]
	return s, ok
}

// AgentState is one parsed agent-state file.
type AgentState struct {
	State   string
	Gen     string
	Event   string
	At      time.Time
	Harness string
	// Turn is when the turn this report belongs to began: the at of the
	// prompt-submitted report that started it, carried on by the reports
	// after it. Zero when no prompt was reported. An interrupt reads it to
	// tell an idle report for a turn after a submit from one for a turn
	// before it.
	Turn time.Time
}

// AgentStatePath is where the agent's own telemetry lands.
func (s Store) AgentStatePath(id string) string { return filepath.Join(s.Dir, id+".agent-state") }

// Bytes renders the file.
func (a AgentState) Bytes() []byte {
	out := fmt.Sprintf("state=%s\ngen=%s\nevent=%s\nat=%s\nharness=%s\n",
		a.State, a.Gen, a.Event, a.At.UTC().Format(time.RFC3339Nano), a.Harness)
	if !a.Turn.IsZero() {
		out += "turn=" + a.Turn.UTC().Format(time.RFC3339Nano) + "\n"
	}
	return []byte(out)
}

// Next is the report that follows a (the current report of the same
// incarnation, or the zero one) when the agent reports activity at now:
// a prompt starts a turn, and every other report carries a's turn on.
func (a AgentState) Next(activity, gen, event, harness string, now time.Time) AgentState {
	next := AgentState{State: activity, Gen: gen, Event: event, At: now, Harness: harness}
	switch {
	case activity == ActivityBusy:
		next.Turn = now
	case a.Gen == gen:
		next.Turn = a.Turn
	}
	return next
}

// ParseAgentState reads the file's lines; a file missing state or gen, or
// with a state outside the vocabulary, is refused.
func ParseAgentState(data []byte) (AgentState, error) {
	var a AgentState
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch k {
		case "state":
			a.State = v
		case "gen":
			a.Gen = v
		case "event":
			a.Event = v
		case "harness":
			a.Harness = v
		case "at":
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return AgentState{}, fmt.Errorf("agent-state at=%q: %w", v, err)
			}
			a.At = t
		case "turn":
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return AgentState{}, fmt.Errorf("agent-state turn=%q: %w", v, err)
			}
			a.Turn = t
		}
	}
	switch a.State {
	case ActivityReady, ActivityBusy, ActivityIdle, ActivityWaiting, ActivityEnded:
	default:
		return AgentState{}, fmt.Errorf("agent-state has no known state (%q)", a.State)
	}
	if a.Gen == "" {
		return AgentState{}, fmt.Errorf("agent-state has no gen")
	}
	return a, nil
}

// ReadAgentState returns the task's agent state when it belongs to the
// incarnation gen names: the agent-state file's report with the events
// directory's newer reports folded in (agentevents.go). ok is false when
// there is none, it is unreadable, or it is a stale incarnation's.
func (s Store) ReadAgentState(id, gen string) (AgentState, bool) {
	if gen == "" {
		return AgentState{}, false
	}
	a, ok := s.readReport(id, gen)
	return s.foldAgentEvents(id, gen, a, ok, time.Now())
}

// readReport reads the agent-state file alone.
func (s Store) readReport(id, gen string) (AgentState, bool) {
	data, err := ReadSmallFile(s.AgentStatePath(id), 4096)
	if err != nil {
		return AgentState{}, false
	}
	a, err := ParseAgentState(data)
	if err != nil || a.Gen != gen {
		return AgentState{}, false
	}
	return a, true
}
