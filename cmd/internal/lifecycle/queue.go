package lifecycle

import (
	"context"
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
	gen := t.Task.Record.SpawnGen()
	for _, s := range sends {
		// One queued to an agent before this one (a relaunch) went with it.
		// An unrecorded send (let go of, never seen in the record) may
		// sit in a queue the screen did not show (pi's steer drawn late).
		queuedOrUnseen := s.Verdict == string(deliver.Queued) || s.Verdict == string(deliver.Unrecorded)
		if !queuedOrUnseen || s.Harness != t.RecordedHarness || (s.Gen != "" && s.Gen != gen) {
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
// underWay, when set, reports whether a flush the record does not show yet
// is under way, which is then watched for up to flushLag.
func (q queued) flushed(ctx context.Context, wait time.Duration, underWay func() bool) (ids []string, running bool) {
	if len(q.sends) == 0 {
		return nil, false
	}
	start := time.Now()
	deadline := start.Add(wait)
	poll := backends.Backoff{Max: 100 * time.Millisecond}
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
