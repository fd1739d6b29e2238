package lifecycle

import (
	"context"
	"slices"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/task"
	"fmctl/harness/records"
	"fmctl/state"
)

// flushWait bounds how long an interrupt that found queued messages waits
// for the agent to flush them into a new turn once the cancelled turn
// ended: gemini submits its whole queue as one message when its state
// turns idle, a render after the cancel, and claude takes its queue the
// same way; a flush later than this is left to wait --for submitted.
const flushWait = 2 * time.Second

// flushLag bounds the watch for a flush the screen shows under way once
// flushWait is over: the agent busy again with its queue no longer drawn,
// while its record has not taken the messages yet (claude, under load, in
// the tier's outage world, recorded its flushed queue 2-5 s after the
// cancel, and the interrupt named no queue).
const flushLag = 10 * time.Second

// queued are the messages fm-send reported queued behind the running turn
// (the agent drew them in its queue) that the agent's record did not hold
// when the interrupt began. A cancel may flush them into a new turn, which
// would leave a caller who believes the agent stopped looking at a busy one.
type queued struct {
	reader records.Reader
	sends  []state.Send
	// blind: the ledger holds queued messages, but no record of the agent
	// can be read to tell whether it took them.
	blind bool
}

// pendingQueue reads the task's send ledger for those messages; with no
// record to prove them by, there are none to report (blind says whether
// the ledger held any).
func pendingQueue(t *task.Target, r turnRecord) queued {
	sends, err := t.Store.Sends(t.ID)
	if err != nil {
		return queued{}
	}
	reader, ok := r.(records.Reader)
	q := queued{reader: reader}
	for _, s := range sends {
		if !pending(t, s) {
			continue
		}
		if !ok {
			q.blind = true
			continue
		}
		if q.watch(s).Check().Held() {
			q.sends = append(q.sends, s)
		}
	}
	return q
}

// pending reports whether fm-send left s queued, or never saw it
// recorded, with the task's live agent: one queued to an agent before this
// one (a relaunch) went with it, and an unrecorded send (let go of, never
// seen in the record) may sit in a queue the screen did not show (pi's
// steer drawn late).
func pending(t *task.Target, s state.Send) bool {
	queuedOrUnseen := s.Verdict == string(deliver.Queued) || s.Verdict == string(deliver.Unrecorded)
	gen := t.Task.Record.SpawnGen()
	return queuedOrUnseen && s.Harness == t.RecordedHarness && (s.Gen == "" || s.Gen == gen)
}

// queueDrawnBefore reports, before an interrupt's keys, whether the agent
// draws a queue while fm-send has messages pending with it: what letGo
// needs to tell a queue the cancel emptied from one the agent never
// draws (claude 2.1.332 keeps its queue off the screen). It reads the
// screen only when the ledger has such a message.
func queueDrawnBefore(ctx context.Context, t *task.Target) bool {
	sig, ok := t.Harness.Screen()
	if !ok || !sig.HasQueue() {
		return false
	}
	sends, err := t.Store.Sends(t.ID)
	if err != nil || !slices.ContainsFunc(sends, func(s state.Send) bool { return pending(t, s) }) {
		return false
	}
	return queueDrawn(ctx, t)
}

func (q queued) watch(s state.Send) deliver.RecordWatch {
	return deliver.SentWatch(q.reader, s)
}

// untaken are the ids of the queued messages the record still does not
// hold, read now: after an agent's exit, the messages it never took.
func (q queued) untaken() []string {
	var ids []string
	for _, s := range q.sends {
		if q.watch(s).Check().Held() {
			ids = append(ids, s.MessageID)
		}
	}
	return ids
}

// flushed watches, up to wait, for the queued messages to reach the
// record, and returns the ids of those that did and whether the record
// then shows a turn running.
// The record is read every poll (FM_CONTROL_POLL at most). underWay, when
// set, reports whether a flush the record does not show yet
// is under way, which is then watched for up to flushLag.
func (q queued) flushed(ctx context.Context, wait time.Duration, poll *backends.Backoff, underWay func() bool) (ids []string, running bool) {
	if len(q.sends) == 0 {
		return nil, false
	}
	start := time.Now()
	deadline := start.Add(wait)
	for {
		ids = ids[:0]
		for _, s := range q.sends {
			if q.watch(s).Check().Taken() {
				ids = append(ids, s.MessageID)
			}
		}
		if len(ids) == len(q.sends) || poll.Sleep(ctx) != nil {
			break
		}
		if time.Now().After(deadline) {
			if len(ids) > 0 || underWay == nil || time.Since(start) > flushLag || !underWay() {
				break
			}
		}
	}
	if len(ids) == 0 {
		return nil, false
	}
	running, _ = q.reader.TurnRunning()
	return ids, running
}

// letGoSettle is how long an idle screen with no queue drawn must hold
// before letGo believes the queue empty: an agent taking its queue into a
// new turn may draw neither for a render in between.
const letGoSettle = 500 * time.Millisecond

// letGo are the queued messages, besides flushed, that the agent let go
// of at the cancel: it drew a queue before the keys (drawnBefore), and
// after them it sits idle with none drawn, for letGoSettle, while its
// record never took them, so nothing holds them any more. cline 3.0.65,
// interrupted with eight texts queued during an outage, took the first
// into a new turn and drew no queue after it; the other seven were never
// submitted. A queue still drawn (the agent may submit it yet), a busy
// screen, one that cannot be read, or a queue never drawn names none.
func (q queued) letGo(ctx context.Context, t *task.Target, flushed []string, drawnBefore bool) []string {
	if !drawnBefore || len(q.sends) == len(flushed) {
		return nil
	}
	sig, _ := t.Harness.Screen()
	emptied := func() bool {
		s, err := t.Backend.Capture(ctx, t.Endpoint)
		return err == nil && !sig.ShowsQueue(s.Lines) && !sig.ReadScreen(s.Lines).Busy
	}
	if !emptied() || backends.Sleep(ctx, letGoSettle) != nil || !emptied() {
		return nil
	}
	var ids []string
	for _, m := range q.sends {
		if !slices.Contains(flushed, m.MessageID) && q.watch(m).Check().Held() {
			ids = append(ids, m.MessageID)
		}
	}
	return ids
}
