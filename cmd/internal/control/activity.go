package control

import (
	"strconv"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/lifecycle"
	"fmctl/cmd/internal/task"
	"fmctl/state"
)

// The activity vocabulary: the one word status, list and wait print for
// what the agent is doing. Each comes with the evidence that decided it, so
// a reader never has to reconcile two fields that disagree.
const (
	actStarting = "starting" // launched moments ago; its harness reports, but has not yet
	actIdle     = state.ActivityIdle
	actBusy     = state.ActivityBusy
	actWaiting  = state.ActivityWaiting
	actDead     = "dead" // no agent at the endpoint (a shell, or the endpoint is gone)
	actUnknown  = state.ActivityUnknown
)

// The evidence words: what decided the activity.
const (
	evTelemetry = "telemetry"    // the agent's own report for the incarnation the record names
	evStatus    = "agent-status" // the multiplexer's own reading of the agent (herdr's agent_status)
	evBusyState = "busy-state"   // the legacy state/<id>.busy-state file said busy
	evEndpoint  = "endpoint"     // the backend's reading of the endpoint (no agent, or not one to believe)
	evLaunch    = "launch"       // the record's spawn_gen is younger than the launch wait
	evNone      = "none"         // nothing: an unwired harness, an unknown CLI, a report that never came
)

// agentActivity is one reading of the vocabulary.
type agentActivity struct {
	Word     string
	Evidence string
}

// readActivity decides what the agent is doing from the endpoint's state
// and the agent's own reports, never from a guess: no report is unknown,
// never idle. An agent that is not there (or not one fmctl can attribute)
// is doing nothing a report could describe, whatever its last report said.
// launch is the window after a launch in which a wired harness that has not
// reported yet is starting rather than unknown.
func readActivity(t *task.Target, obs backends.Observation, now time.Time, launch time.Duration) agentActivity {
	switch obs.State {
	case backends.StateDead, backends.StateMissing:
		return agentActivity{actDead, evEndpoint}
	case backends.StateAlive, backends.StateUnverified:
	default:
		return agentActivity{actUnknown, evEndpoint}
	}
	if a, ok := lifecycle.Activity(t); ok {
		switch a.State {
		case state.ActivityBusy, state.ActivityWaiting:
			return agentActivity{a.State, evTelemetry}
		case state.ActivityReady, state.ActivityIdle:
			return agentActivity{actIdle, evTelemetry}
		}
		// ended while the endpoint still holds it: the session said it
		// was over, the process says otherwise; neither is idle.
		return agentActivity{actUnknown, evTelemetry}
	}
	// herdr's classifier knows the agent it names; its word stands in for
	// a report the agent did not make.
	switch obs.Turn {
	case backends.TurnWorking:
		return agentActivity{actBusy, evStatus}
	case backends.TurnBlocked:
		return agentActivity{actWaiting, evStatus}
	case backends.TurnIdle:
		return agentActivity{actIdle, evStatus}
	}
	// The legacy file carries no generation, so it can only say busy
	// (which exit already treats as a reason to interrupt), never idle.
	if t.Store.BusyState(t.ID) == "busy" {
		return agentActivity{actBusy, evBusyState}
	}
	if _, wired := t.Harness.Telemetry(); wired {
		if at, ok := spawnedAt(t.Task.Record.SpawnGen()); ok && now.Sub(at) < launch {
			return agentActivity{actStarting, evLaunch}
		}
	}
	return agentActivity{actUnknown, evNone}
}

// spawnedAt reads the launch time out of a spawn_gen (s<unix seconds>.<pid>,
// launch.newSpawnGen); any other shape has none.
func spawnedAt(gen string) (time.Time, bool) {
	secs, _, ok := strings.Cut(strings.TrimPrefix(gen, "s"), ".")
	if !ok || !strings.HasPrefix(gen, "s") {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}
