package control

import (
	"context"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/lifecycle"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/harness/records"
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
	evScreen    = "screen"       // the screen by the harness's verified signatures: a dialog drawn, or a reported one gone
	evStatus    = "agent-status" // the multiplexer's own reading of the agent (herdr's agent_status)
	evBusyState = "busy-state"   // the legacy state/<id>.busy-state file said busy
	evEndpoint  = "endpoint"     // the backend's reading of the endpoint (no agent, or not one to believe)
	evLaunch    = "launch"       // the record's spawn_gen is younger than the launch wait
	evRecord    = "record"       // the agent's own record: its session status where no hook reports (cline), or a turn end no hook reported
	evNone      = "none"         // nothing: an unwired harness, an unknown CLI, a report that never came
)

// agentActivity is one reading of the vocabulary.
type agentActivity struct {
	Word     string
	Evidence string
	// For is what a waiting agent waits for (harness.WaitPermission, ...),
	// "unknown" where its report names no dialog; "" unless waiting.
	For string
	// turn is the newest turn where reading the activity already read it
	// from the record (a busy report the record's turn end outranks), so
	// status and wait do not read the record twice.
	turn *turnView
}

// lastTurn is the newest turn as the record tells it: the one read for the
// activity, or a fresh read.
func (a agentActivity) lastTurn(t *task.Target, obs backends.Observation) turnView {
	if a.turn != nil {
		return *a.turn
	}
	return lastTurn(t, obs)
}

// waitingUnknown is For when the agent reported waiting and its screen
// shows no dialog its signatures name.
const waitingUnknown = "unknown"

// screenView is one read of the agent's screen by its harness's verified
// signatures; the zero value is no read.
type screenView struct {
	Read   bool
	Dialog harness.Dialog // the dialog the agent waits at (Waits set), if one is drawn
	Ready  bool           // the composer drawn, with no dialog over it
	Busy   bool           // a busy mark on screen
	Held   string         // the digest of the text the composer holds (deliver.ComposerDigest), if any
}

// readScreen reads the endpoint's screen by the harness's verified
// signatures. A dialog is waiting the moment it is drawn, while a hook may
// report it seconds later (claude's permission_prompt Notification: ~6 s)
// or never. Only the task's own live agent's screen is read.
func readScreen(ctx context.Context, t *task.Target, obs backends.Observation) screenView {
	sig, ok := screenSig(t, obs)
	if !ok {
		return screenView{}
	}
	st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig)
	if err != nil {
		return screenView{}
	}
	return viewOf(sig, st)
}

// observe reads the endpoint's agent state and its screen, in one
// multiplexer call where the backend can (backends.StateCapturer).
func observe(ctx context.Context, t *task.Target) (backends.Observation, screenView) {
	sc, ok := t.Backend.(backends.StateCapturer)
	if !ok {
		obs := t.Backend.AgentState(ctx, t.Endpoint)
		return obs, readScreen(ctx, t, obs)
	}
	obs, s, err := sc.AgentStateAndCapture(ctx, t.Endpoint)
	sig, ok := screenSig(t, obs)
	switch {
	case !ok:
		return obs, screenView{}
	case err != nil:
		return obs, readScreen(ctx, t, obs)
	}
	return obs, viewOf(sig, sig.ReadScreen(s.Lines))
}

// screenSig is the signature t's screen is read by: only the task's own
// live agent's, and only a harness with verified signatures.
func screenSig(t *task.Target, obs backends.Observation) (harness.ScreenSig, bool) {
	if !t.HasHarness || !t.Attributed(obs) {
		return harness.ScreenSig{}, false
	}
	return t.Harness.Screen()
}

func viewOf(sig harness.ScreenSig, st harness.ScreenState) screenView {
	v := screenView{Read: true, Ready: st.Ready(), Busy: st.Busy}
	if st.Composer == harness.ComposerHolding {
		v.Held = deliver.ComposerDigest(st.HeldText())
	}
	if d, ok := sig.WaitingAt(st); ok {
		v.Dialog = d
	}
	return v
}

// readActivity decides what the agent is doing from the endpoint's state
// and the agent's own reports, never from a guess: no report is unknown,
// never idle. An agent that is not there (or not one fmctl can attribute)
// is doing nothing a report could describe, whatever its last report said.
// w.Launch is the window after a launch in which a wired harness that has
// not reported yet is starting rather than unknown; w.ReportLag is
// turnBeforeReport's.
//
// scr is the agent's screen (readScreen): a waiting dialog drawn there
// decides before every report, which may come seconds late; and a waiting
// report whose dialog is gone from the screen (answered, or dismissed by an
// interrupt that fired no hook) is not left standing.
func readActivity(t *task.Target, obs backends.Observation, now time.Time, w lifecycle.Waits, scr screenView) agentActivity {
	switch obs.State {
	case backends.StateDead, backends.StateMissing:
		return agentActivity{Word: actDead, Evidence: evEndpoint}
	case backends.StateAlive, backends.StateUnverified:
	default:
		return agentActivity{Word: actUnknown, Evidence: evEndpoint}
	}
	if scr.Dialog.Waits != "" {
		return agentActivity{Word: actWaiting, Evidence: evScreen, For: scr.Dialog.Waits}
	}
	if a, ok := lifecycle.Activity(t); ok {
		switch a.State {
		case state.ActivityBusy:
			if turn, ended := endedUnreported(t, obs, a.At, scr); ended {
				return agentActivity{Word: actIdle, Evidence: evRecord, turn: &turn}
			}
			return agentActivity{Word: actBusy, Evidence: evTelemetry}
		case state.ActivityWaiting:
			if gone, ok := waitGone(t, scr); ok {
				return gone
			}
			return agentActivity{Word: actWaiting, Evidence: evTelemetry, For: reportedWait(t)}
		case state.ActivityReady, state.ActivityIdle:
			// A busy mark drawn now outranks an idle report: pi reports
			// each failed attempt's end and then retries on its own, so in
			// its back-off the last report is idle while its turn runs.
			if scr.Busy {
				return agentActivity{Word: actBusy, Evidence: evScreen}
			}
			// The launch prompt still held in the composer has not been
			// taken: kilo, loaded, reports its session idle and draws the
			// prompt there for more than a minute before it submits it.
			if launchHeld(t, scr) {
				return agentActivity{Word: actStarting, Evidence: evScreen}
			}
			if turnBeforeReport(t, obs, a.At, now, w.ReportLag) {
				return agentActivity{Word: actBusy, Evidence: evRecord}
			}
			return agentActivity{Word: actIdle, Evidence: evTelemetry}
		}
		// ended while the endpoint still holds it: the session said it
		// was over, the process says otherwise; neither is idle.
		return agentActivity{Word: actUnknown, Evidence: evTelemetry}
	}
	if act, ok := sessionActivity(t, obs); ok {
		return act
	}
	// herdr's classifier knows the agent it names; its word stands in for
	// a report the agent did not make.
	switch obs.Turn {
	case backends.TurnWorking:
		return agentActivity{Word: actBusy, Evidence: evStatus}
	case backends.TurnBlocked:
		return agentActivity{Word: actWaiting, Evidence: evStatus, For: waitingUnknown}
	case backends.TurnIdle:
		return agentActivity{Word: actIdle, Evidence: evStatus}
	}
	// The legacy file carries no generation, so it can only say busy
	// (which exit already treats as a reason to interrupt), never idle.
	if t.Store.BusyState(t.ID) == "busy" {
		return agentActivity{Word: actBusy, Evidence: evBusyState}
	}
	if _, wired := t.Harness.Telemetry(); wired {
		if at, ok := t.Task.Record.SpawnedAt(); ok && now.Sub(at) < w.Launch {
			return agentActivity{Word: actStarting, Evidence: evLaunch}
		}
	}
	return agentActivity{Word: actUnknown, Evidence: evNone}
}

// launchHeld says the composer holds the launch prompt fm-spawn handed the
// agent (state/<id>.typed), which it has not taken yet.
func launchHeld(t *task.Target, scr screenView) bool {
	if scr.Held == "" {
		return false
	}
	typed, ok := t.Store.ReadTyped(t.ID)
	return ok && typed.Owns(scr.Held) == state.OwnLaunch
}

// turnBeforeReport says whether the agent's newest report (idle, at at)
// predates a message fmctl submitted within lag (FM_CONTROL_REPORT_LAG)
// whose turn the record shows running; only then is the record read.
// gemini writes a prompt to its record before its BeforeAgent hook reports
// busy, which took seconds under CI load, and a `wait --for idle` right
// after the send read the idle report of the turn before (the tier's
// wait-idle-after-reply, 2026-12-06).
func turnBeforeReport(t *task.Target, obs backends.Observation, at, now time.Time, lag time.Duration) bool {
	last, ok := t.Store.LastSubmitted(t.ID)
	if !ok || !last.After(at) || now.Sub(last) > lag {
		return false
	}
	turn := lastTurn(t, obs)
	return turn.Read && !turn.Ended
}

// endedUnreported reads, for a harness whose hooks leave some turn ends
// unreported, whether the agent's record ended its newest turn after the
// busy report at: copilot runs no agentStop for a turn whose model calls
// failed for good, nor a hook for a cancel, and claude none for a cancel,
// so that report would stand until the next prompt and `wait --for idle`
// would time out on an idle agent. A busy mark drawn now keeps the report
// standing; only a harness that may leave an end unreported pays for the
// record's read, and the turn read is returned for the caller to keep.
func endedUnreported(t *task.Target, obs backends.Observation, at time.Time, scr screenView) (turnView, bool) {
	tel, ok := t.Harness.Telemetry()
	if scr.Busy || !ok || !tel.LeavesEndsUnreported() {
		return turnView{}, false
	}
	turn := lastTurn(t, obs)
	return turn, turn.Ended && !turn.At.IsZero() && turn.At.After(at)
}

// sessionActivity reads, for a harness that wires no hooks but keeps its
// session's state in its record (cline's status: running, pending, idle),
// that state as the agent's own word. A session over, or none yet, says
// nothing.
func sessionActivity(t *task.Target, obs backends.Observation) (agentActivity, bool) {
	if _, wired := t.Harness.Telemetry(); wired {
		return agentActivity{}, false
	}
	r, ok := t.AgentRecord(obs)
	if !ok {
		return agentActivity{}, false
	}
	ss, ok := r.(records.SessionStatus)
	if !ok {
		return agentActivity{}, false
	}
	switch word, err := ss.Activity(); {
	case err != nil:
		return agentActivity{}, false
	case word == actBusy, word == actIdle:
		return agentActivity{Word: word, Evidence: evRecord}, true
	case word == actWaiting:
		// A dialog its screen signatures name was read before this; the
		// status does not say which one it waits at.
		return agentActivity{Word: actWaiting, Evidence: evRecord, For: waitingUnknown}, true
	}
	return agentActivity{}, false
}

// waitGone reads a waiting report against the screen: where every dialog
// the harness reports waiting at has a verified signature (its waiting
// events name one kind) and the screen shows the composer with none drawn,
// the dialog is gone, and the screen says whether a turn runs. gemini
// reported waiting at its permission dialog and, after an interrupt there
// dismissed it, nothing more. claude's report covers questions, which have
// no signature, so it stands.
func waitGone(t *task.Target, scr screenView) (agentActivity, bool) {
	tel, ok := t.Harness.Telemetry()
	if !ok || tel.WaitingFor() == "" || !scr.Read || !scr.Ready {
		return agentActivity{}, false
	}
	if scr.Busy {
		return agentActivity{Word: actBusy, Evidence: evScreen}, true
	}
	return agentActivity{Word: actIdle, Evidence: evScreen}, true
}

// reportedWait is what an agent that reported waiting, with no dialog on
// its screen fmctl can name, waits for: the one kind its wiring reports
// waiting for, else unknown.
func reportedWait(t *task.Target) string {
	if tel, ok := t.Harness.Telemetry(); ok {
		if kind := tel.WaitingFor(); kind != "" {
			return kind
		}
	}
	return waitingUnknown
}
