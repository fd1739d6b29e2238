package lifecycle

import (
	"context"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/press"
	"fmctl/cmd/internal/task"
	"fmctl/harness/records"
	"fmctl/state"
)

// endedReads is how many reads in a row must show the turn over before
// the cancel is confirmed.
const endedReads = 2

// turnRecord is the one question an interrupt asks of the agent's own
// record (harness/records): does a turn still run. Claude fires no hook on
// a user interrupt, and some keys land where they cancel nothing (opencode
// right after a submit, claude in its retry back-off), so only the record
// can say the interrupt did what it is for.
type turnRecord interface {
	TurnRunning() (bool, error)
}

// turnVerdict is what the record said of the turn after the interrupt.
type turnVerdict string

const (
	turnEnded      turnVerdict = "ended"      // shown running, then ended
	turnStillRuns  turnVerdict = "running"    // still running after every round and the budget
	turnNeverShown turnVerdict = "no-turn"    // never shown running: the record says nothing of this interrupt
	turnUnreadable turnVerdict = "unreadable" // a read failed: the record says nothing either
)

// cancelWatch watches the record after an interrupt's first round of keys
// and, while it shows the turn still running, sends the round again
// (rounds in all, the table's interrupt_rounds), within budget.
type cancelWatch struct {
	record turnRecord
	rounds int
	budget time.Duration
	poll   time.Duration // the cap of the poll interval
	// mayStart: a turn the record does not show yet may be starting (a
	// submit moments before, or the agent reported a turn), so one never
	// shown is watched for a share of the budget. Otherwise a record
	// that shows no turn after the keys is the answer at once.
	mayStart bool
	// again sends the harness's whole key sequence once more, past the
	// agent-state gate; an error (the agent gone, a key not delivered)
	// ends the watch.
	again func(ctx context.Context) error
}

// watched is the watch's result.
type watched struct {
	verdict turnVerdict
	rounds  int // key rounds sent, the first included
}

// run watches, given whether the record showed the turn running before
// the first keys (shown). Each round gets an equal share of the budget,
// counted from its last key, so the whole watch is the budget plus the
// time the keys take. A
// round is sent again only right after a read that shows the turn running:
// a key that the table says ends or arms an idle agent must not follow a
// turn that has already ended. A turn the record never showed is watched
// for one share only, and only when one may be starting (a prompt the
// agent took just before the keys); if it shows up running it is watched
// as any other.
func (w cancelWatch) run(ctx context.Context, shown bool) (watched, error) {
	rounds := max(w.rounds, 1)
	share := w.budget / time.Duration(rounds)
	roundEnd := time.Now().Add(share)
	poll := backends.Backoff{Max: w.poll}
	res := watched{rounds: 1}
	ended := 0 // reads in a row that show a turn shown before as over
	for {
		running, err := w.record.TurnRunning()
		if err != nil {
			res.verdict = turnUnreadable
			return res, nil
		}
		now := time.Now()
		if running || !shown {
			ended = 0
		} else {
			ended++
		}
		switch {
		case ended >= endedReads:
			res.verdict = turnEnded
			return res, nil
		case ended > 0:
			// once more before the claim: a record file caught mid-write
			// (claude rewrites its session status) reads as no turn. That
			// read comes at the poll's shortest: a write is soon done.
			poll = backends.Backoff{Max: w.poll}
		case !running && (now.After(roundEnd) || !shown && !w.mayStart):
			res.verdict = turnNeverShown
			return res, nil
		case running && now.After(roundEnd) && res.rounds >= rounds:
			res.verdict = turnStillRuns
			return res, nil
		case running && now.After(roundEnd):
			if err := w.again(ctx); err != nil {
				return res, err
			}
			res.rounds++
			roundEnd = time.Now().Add(share)
			poll = backends.Backoff{Max: w.poll}
		}
		shown = shown || running
		if poll.Sleep(ctx) != nil {
			res.verdict = turnStillRuns
			if !shown {
				res.verdict = turnNeverShown
			}
			return res, nil
		}
	}
}

// turnBefore is the agent's own record as read before the interrupt keys.
type turnBefore struct {
	record  turnRecord // nil: fmctl cannot read this harness's record, or could not now
	running bool       // the record showed a turn running
	// retrying: the record showed no turn, and the agent's screen showed
	// its retry back-off (a DropsInput mark, pi's "Retrying (", or its busy
	// mark): pi records a failed attempt, then waits out the retry and
	// makes the next attempt with nothing in its record, so its record's
	// "no turn" is not the agent's whole word.
	retrying bool
}

// readTurn opens the agent's record and reads it once, before the keys;
// obs is the agent observed, or nil to observe it here (the record is found
// through the agent's process). A record that cannot be read leaves the
// interrupt to today's evidence (an ack, the agent's telemetry).
func (c *Verbs) readTurn(ctx context.Context, t *task.Target, obs *backends.Observation) turnBefore {
	if !t.HasHarness || !records.Has(t.Harness.Name) {
		return turnBefore{}
	}
	if obs == nil {
		o := t.Backend.AgentState(ctx, t.Endpoint)
		obs = &o
	}
	r, ok := c.openRecord(t, *obs)
	if !ok {
		return turnBefore{}
	}
	running, err := r.TurnRunning()
	if err != nil {
		return turnBefore{}
	}
	return turnBefore{record: r, running: running, retrying: !running && retryDrawn(ctx, t)}
}

// retryDrawn reads the agent's screen for its retry back-off, only for a
// harness whose table row names one (DropsInput): one capture more for
// those, none for the rest. The back-off is its loader, or its busy mark:
// the attempt itself, which pi records only once it ends.
func retryDrawn(ctx context.Context, t *task.Target) bool {
	sig, ok := t.Harness.Screen()
	if !ok || len(sig.DropsInput) == 0 {
		return false
	}
	st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, sig)
	return err == nil && (st.Dropping || st.Busy)
}

// openAgentRecord is the product's record seam: the reader for the task's
// live agent (task.AgentRecord).
func openAgentRecord(t *task.Target, obs backends.Observation) (turnRecord, bool) {
	r, ok := t.AgentRecord(obs)
	if !ok {
		return nil, false
	}
	return r, true
}

// Cancel is an interrupt's verdict on the turn it was for: one word per
// exit code, so a script reading either never meets a contradiction.
const (
	CancelConfirmed   = "confirmed"   // exit 0: a turn ran, and its end was proved
	CancelNoTurn      = "no-turn"     // exit 0: the agent's own word is that no turn ran
	CancelUnconfirmed = "unconfirmed" // exit 3: the keys went, and nothing proved the turn over, or that none ran
)

// Proof names what a cancel verdict rests on.
const (
	ProofRecord    = "record"    // the agent's own record showed the turn end, or no turn
	ProofAck       = "ack"       // an adapter-owned acknowledgement (muse's session log)
	ProofTelemetry = "telemetry" // the agent's own report: a turn end after the keys, or idle before them
	ProofNone      = "none"      // nothing proved the cancel
)

// cancelled is what an interrupt proved of the turn it was for.
type cancelled struct {
	Cancel string // CancelConfirmed, CancelNoTurn or CancelUnconfirmed
	Proof  string // ProofRecord, ProofAck, ProofTelemetry or ProofNone
	Rounds int    // key rounds sent
	// Running: the record still showed the turn after every round.
	Running bool
	// Cleared is the cancelled prompt a repeated round found put back
	// and cleared ("" for none).
	Cleared string
	// Retry is what became of a retry back-off drawn before the keys that
	// the record does not hold (turnBefore.retrying): RetryGone or
	// RetryDrawn; "" when there was none.
	Retry string
}

// What the screen showed of an unrecorded retry back-off after the keys.
const (
	RetryGone  = "gone"  // the back-off is no longer drawn
	RetryDrawn = "drawn" // still drawn when the cancel budget ran out
)

// confirmCancel judges an interrupt whose first round of keys went out at
// since (ack is what that round's acknowledgement said). Where the record
// can be read, the record decides, and the keys are repeated while it
// shows the turn running; elsewhere the ack or, when the agent had
// reported a turn (reported), its own turn-end report. The record is
// watched even when neither it nor the agent showed a turn yet: a prompt
// submitted a moment before the keys may not have started its turn
// (gemini logs it at once and records its turn only as the request goes
// out), and a key that lands before the turn starts cancels nothing, so
// the turn that then shows up gets the keys again. Every repeat passes
// gate. An agent whose own word is that no turn ran (its record, its idle
// report, muse's log) had nothing to cancel: no-turn. Anything else is
// unconfirmed, which the interrupt verb exits 3 with.
func (c *Verbs) confirmCancel(ctx context.Context, t *task.Target, before turnBefore, reported bool, ack string, since time.Time, gate func(backends.Observation) error, hold *state.Lock) (verdict cancelled, err error) {
	cleared := ""
	defer func() { verdict.Cleared = cleared }()
	if ack == CancelConfirmed {
		return cancelled{Cancel: CancelConfirmed, Proof: ProofAck, Rounds: 1}, nil
	}
	noTurn := ""
	if before.record != nil {
		w := cancelWatch{record: before.record, rounds: t.Harness.Rounds, budget: c.waits.Cancel, poll: c.waits.Poll, again: c.repeatInterrupt(t, gate, hold, &cleared),
			mayStart: reported || submitPending(t, since)}
		res, err := w.run(ctx, before.running)
		if err != nil {
			return cancelled{Cancel: CancelUnconfirmed, Proof: ProofNone, Rounds: res.rounds}, err
		}
		switch res.verdict {
		case turnEnded:
			return cancelled{Cancel: CancelConfirmed, Proof: ProofRecord, Rounds: res.rounds}, nil
		case turnStillRuns:
			return cancelled{Cancel: CancelUnconfirmed, Proof: ProofRecord, Rounds: res.rounds, Running: true}, nil
		case turnNeverShown:
			if w.mayStart && markedCancel(before.record, since) {
				return cancelled{Cancel: CancelConfirmed, Proof: ProofRecord, Rounds: res.rounds}, nil
			}
			noTurn = ProofRecord
		}
	}
	if reported && c.waitTurnEnd(ctx, t, since) {
		return cancelled{Cancel: CancelConfirmed, Proof: ProofTelemetry, Rounds: 1}, nil
	}
	if noTurn == ProofRecord && before.retrying {
		// The record never held the retry, so it cannot say the keys
		// ended it, nor that none was due: exit 3 either way, with what
		// the screen shows of it. (An attempt under way when the keys
		// went ends with the agent's turn-end report, above.)
		return cancelled{Cancel: CancelUnconfirmed, Proof: ProofNone, Rounds: 1, Retry: c.retryAfterKeys(ctx, t)}, nil
	}
	// An idle report, or muse's log with no run, speaks for the agent
	// only when no submit may be starting a turn it does not show yet.
	switch {
	case noTurn != "":
	case reported || submitPending(t, since):
	case idleByReport(t):
		noTurn = ProofTelemetry
	case ack == CancelNoTurn:
		noTurn = ProofAck
	}
	if noTurn != "" {
		return cancelled{Cancel: CancelNoTurn, Proof: noTurn, Rounds: 1}, nil
	}
	return cancelled{Cancel: CancelUnconfirmed, Proof: ProofNone, Rounds: 1}, nil
}

// retryAfterKeys watches the screen, within the cancel budget, for the
// retry back-off drawn before the keys to go (pi's Escape ends its wait at
// once and draws "Retry cancelled").
func (c *Verbs) retryAfterKeys(ctx context.Context, t *task.Target) string {
	deadline := time.Now().Add(c.waits.Cancel)
	poll := backends.Backoff{Max: c.waits.Poll}
	for {
		if !retryDrawn(ctx, t) {
			return RetryGone
		}
		if time.Now().After(deadline) || poll.Sleep(ctx) != nil {
			return RetryDrawn
		}
	}
}

// markedCancel reports whether the record marks a cancel since the first
// keys, where the harness's record marks one (records.CancelMarker): the
// proof for a turn that was starting but never showed running, as gemini's
// prompt cancelled while its BeforeAgent hooks ran.
func markedCancel(r turnRecord, since time.Time) bool {
	m, ok := r.(records.CancelMarker)
	if !ok {
		return false
	}
	marked, err := m.CancelledSince(since)
	return err == nil && marked
}

// turnStartWindow is how long after a submit a turn its agent's record
// does not show yet is still watched for: gemini logs a prompt at once and
// records its turn as the request goes out, a second or more later on a
// loaded machine. An interrupt of an agent sent nothing for longer meets
// no starting turn, and waiting for one would cost every such interrupt a
// share of the cancel budget.
const turnStartWindow = 10 * time.Second

// submitPending reports whether text submitted to t's agent (by fm-send
// or a launch line) within turnStartWindow before at may still start a
// turn: the agent has not reported the end (idle) of a turn that began
// after it. An idle report alone proves nothing: the end of the turn
// before the submit may be reported after it (gemini's AfterAgent, late
// on a loaded machine).
func submitPending(t *task.Target, at time.Time) bool {
	last, ok := t.Store.LastSubmitted(t.ID)
	if !ok || at.Sub(last) >= turnStartWindow {
		return false
	}
	a, ok := Activity(t)
	return !ok || a.State != state.ActivityIdle || a.Turn.Before(last)
}

// repeatInterrupt sends the harness's whole interrupt sequence once more,
// every key past gate (read right before it where the backend cannot gate
// a key itself): the agent may have gone since the first round. A
// cancelled prompt the round clears is kept in cleared.
func (c *Verbs) repeatInterrupt(t *task.Target, gate func(backends.Observation) error, hold *state.Lock, cleared *string) func(context.Context) error {
	return func(ctx context.Context) error {
		each, err := press.GateOnce(ctx, t.Backend, t.Endpoint, gate)
		if err != nil {
			return err
		}
		done, err := c.deliverInterruptThenRead(ctx, t, false, each, hold, nil)
		if done.cleared != "" {
			*cleared = done.cleared
		}
		return err
	}
}

// InterruptGate is what every interrupt key passes: a live (or, on a
// backend without a classifier, unverified) agent that is the task's own.
func InterruptGate(t *task.Target) func(backends.Observation) error {
	return func(obs backends.Observation) error {
		if obs.State != backends.StateAlive && obs.State != backends.StateUnverified {
			return RefuseState(t, "interrupt", obs)
		}
		return t.Gate(obs, "fm-control")
	}
}

// stillRunning is the exit-3 refusal of an interrupt whose turn the
// agent's own record still shows running after every round of keys: the
// keys arrived, but the verb did not do what it is for.
func stillRunning(t *task.Target, c cancelled, wait time.Duration) *fault.Error {
	return fault.Unconfirmed("task %s's turn is still running per %s's own record %s after %d round(s) of its interrupt keys", t.ID, t.Harness.Name, Seconds(wait), c.Rounds).
		Hint("to stop the agent, and its turn with it: fm-control exit %s", t.ID).
		Hint("or to wait for the turn to end by itself: fm-control wait %s --for idle", t.ID).
		With("id", t.ID, "cancel", c.Cancel, "proof", c.Proof).Put(fault.Int("rounds", c.Rounds))
}

// retryUnrecorded is the exit-3 refusal of an interrupt of an agent that
// was waiting out a retry of its model call, which its record does not
// hold (pi writes the failed attempt, then waits): the keys went, and the
// record can prove neither that they ended the retry nor that none was
// due. The screen's word on it is given as what it is.
func retryUnrecorded(t *task.Target, c cancelled) *fault.Error {
	e := fault.Unconfirmed("task %s's %s agent was waiting out a retry of its model call, which its own record does not hold, so nothing proves the interrupt ended it", t.ID, t.Harness.Name)
	if c.Retry == RetryGone {
		e = e.Hint("its screen no longer draws the retry: fm-control status %s says whether a new attempt started", t.ID)
	} else {
		e = e.Hint("its screen still draws the retry: to stop the agent, and its retries with it: fm-control exit %s", t.ID)
	}
	return e.With("id", t.ID, "cancel", c.Cancel, "proof", c.Proof, "retry", c.Retry).Put(fault.Int("rounds", c.Rounds))
}

// cancelUnproven is the exit-3 refusal of an interrupt whose keys went but
// whose effect nothing proved: no record fmctl reads showed the turn end,
// nor showed no turn, and the agent reported neither. The keys may well
// have cancelled a turn; the pane says whether one still runs.
func cancelUnproven(t *task.Target, res InterruptResult) *fault.Error {
	return fault.Unconfirmed("task %s's %s agent got its interrupt keys, but nothing proves a turn was cancelled, or that none ran", t.ID, t.Harness.Name).
		Hint("look at the pane before interrupting again: fm-control read %s", t.ID).
		With("id", t.ID, "cancel", res.Cancel, "proof", res.Proof).
		Put(fault.Int("rounds", res.Rounds))
}
