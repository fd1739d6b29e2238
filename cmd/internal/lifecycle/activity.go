package lifecycle

import (
	"context"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/task"
	"fmctl/state"
)

// Activity is what the agent itself last reported (its harness's wiring,
// through fm-control agent-event) for the incarnation the record names now.
// ok is false when there is no such report: a file from an older
// incarnation, or none at all, says nothing about the agent that runs.
func Activity(t *task.Target) (state.AgentState, bool) {
	return t.Store.ReadAgentState(t.ID, t.Task.Record.SpawnGen())
}

// busyBeforeExit reports whether exit must interrupt before its exit
// command: the legacy busy-state says busy, the agent reports a turn or a
// waiting prompt, or the harness leaves a turn running after its exit
// command and nothing proves it idle (only a harness that also reports its
// prompts can prove that). A busy or waiting report the agent's own record
// has since outrun (reportOutrun) is no turn.
func busyBeforeExit(t *task.Target, turn turnBefore) bool {
	if t.Store.BusyState(t.ID) == "busy" {
		return true
	}
	a, ok := Activity(t)
	if ok && (a.State == state.ActivityBusy || a.State == state.ActivityWaiting) {
		return !reportOutrun(t, a, turn)
	}
	if !t.Harness.ExitKeepsTurn() {
		return false
	}
	return !idleByReport(t)
}

// reportOutrun says the agent's own record ended its newest turn after
// its report a (busy or waiting), for a harness whose hooks leave some turn
// ends unreported: copilot and claude run none for a cancel, so after a
// person's own Ctrl+C the busy report stands until the next prompt. Trusted,
// it cost an exit an interrupt key at an idle agent (copilot's arms its
// exit) and the wait for a cancel that could not come. The record is read
// only where it showed no turn running.
func reportOutrun(t *task.Target, a state.AgentState, turn turnBefore) bool {
	tel, ok := t.Harness.Telemetry()
	if turn.record == nil || turn.running || turn.retrying || !ok || !tel.LeavesEndsUnreported() {
		return false
	}
	end, ended, _ := t.LiveTurn(turn.record)
	return ended && !end.Time.IsZero() && end.Time.After(a.At)
}

// idleByReport reports whether the agent's own last report proves it idle:
// it says idle or ready, and its harness reports its prompts, so a turn
// begun since would have said busy.
func idleByReport(t *task.Target) bool {
	a, ok := Activity(t)
	tel, hasTel := t.Harness.Telemetry()
	return ok && hasTel && tel.ReportsPrompt && (a.State == state.ActivityIdle || a.State == state.ActivityReady)
}

// waitTurnEnd polls the agent's own report for a turn end recorded at or
// after since (the moment the interrupt keys went out): the agent's word
// that the cancelled turn is over. A harness without telemetry, or whose
// wiring is silent on a cancelled turn, has no word to wait for.
func (c *Verbs) waitTurnEnd(ctx context.Context, t *task.Target, since time.Time) bool {
	if tel, ok := t.Harness.Telemetry(); !ok || !tel.ReportsInterrupt {
		return false
	}
	deadline := time.Now().Add(c.waits.Settle)
	for {
		if a, ok := Activity(t); ok && a.State == state.ActivityIdle && !a.At.Before(since) {
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
