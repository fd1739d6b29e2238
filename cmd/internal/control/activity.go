package control

import (
	"context"
	"strconv"
	"strings"
	"time"

	"fmctl/backends"
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
	if a, ok := activity(t); ok {
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

// activity is what the agent itself last reported (its harness's wiring,
// through fm-control agent-event) for the incarnation the record names now.
// ok is false when there is no such report: a file from an older
// incarnation, or none at all, says nothing about the agent that runs.
func activity(t *task.Target) (state.AgentState, bool) {
	return t.Store.ReadAgentState(t.ID, t.Task.Record.SpawnGen())
}

// busyBeforeExit reports whether exit must interrupt before its exit
// command: the legacy busy-state says busy, the agent reports a turn or a
// waiting prompt, or the harness leaves a turn running after its exit
// command and nothing proves it idle (only a harness that also reports its
// prompts can prove that).
func busyBeforeExit(t *task.Target) bool {
	if t.Store.BusyState(t.ID) == "busy" {
		return true
	}
	a, ok := activity(t)
	if ok && (a.State == state.ActivityBusy || a.State == state.ActivityWaiting) {
		return true
	}
	if !t.Harness.ExitKeepsTurn() {
		return false
	}
	tel, hasTel := t.Harness.Telemetry()
	provenIdle := ok && hasTel && tel.ReportsPrompt && (a.State == state.ActivityIdle || a.State == state.ActivityReady)
	return !provenIdle
}

// waitTurnEnd polls the agent's own report for a turn end recorded at or
// after since (the moment the interrupt keys went out): the agent's word
// that the cancelled turn is over. A harness without telemetry, or whose
// wiring is silent on a cancelled turn, has no word to wait for.
func (c *Controller) waitTurnEnd(ctx context.Context, t *task.Target, since time.Time) bool {
	if tel, ok := t.Harness.Telemetry(); !ok || !tel.ReportsInterrupt {
		return false
	}
	deadline := time.Now().Add(c.waits.Settle)
	for {
		if a, ok := activity(t); ok && a.State == state.ActivityIdle && !a.At.Before(since) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		if backends.Sleep(ctx, c.waits.Poll) != nil {
			return false
		}
	}
}
