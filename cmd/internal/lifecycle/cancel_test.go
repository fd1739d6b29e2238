package lifecycle

import (
	"context"
	"errors"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/state"
	"sync"
	"testing"
	"time"
)

// fakeTurn is an agent's record whose turn survives a number of key rounds:
// survives 0 ends with the first round, -1 never ends. startsAfter > 0
// records the turn only after that many reads (a prompt taken just before
// the keys).
type fakeTurn struct {
	mu          sync.Mutex
	running     bool
	survives    int
	startsAfter int
	reads       int
	err         error
	// blinks lists reads that show no turn although one runs: a record
	// file caught mid-write.
	blinks map[int]bool
	rounds int // rounds the fake agent received (the first included)
	// readsAtRound is the read count when each repeat was sent, for the
	// check that a repeat follows a read showing the turn running.
	readsAtRound []int
	runningReads []int
}

func (f *fakeTurn) TurnRunning() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.err != nil {
		return false, f.err
	}
	if f.startsAfter > 0 && f.reads == f.startsAfter {
		f.running = true
	}
	if f.blinks[f.reads] {
		return false, nil
	}
	if f.running {
		f.runningReads = append(f.runningReads, f.reads)
	}
	return f.running, nil
}

// keys is one round of the harness's keys reaching the fake agent.
func (f *fakeTurn) keys() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rounds++
	if f.survives >= 0 && f.rounds > f.survives {
		f.running = false
	}
}

func (f *fakeTurn) again(context.Context) error {
	f.mu.Lock()
	f.readsAtRound = append(f.readsAtRound, f.reads)
	f.mu.Unlock()
	f.keys()
	return nil
}

func watchOf(f *fakeTurn, rounds int) cancelWatch {
	return cancelWatch{record: f, rounds: rounds, budget: 60 * time.Millisecond, poll: 2 * time.Millisecond, again: f.again, mayStart: true}
}

// interrupt sends the first round, as the verb does, then watches.
func (f *fakeTurn) interrupt(t *testing.T, w cancelWatch) watched {
	t.Helper()
	shown, err := f.TurnRunning()
	if err != nil {
		shown = false
	}
	f.keys()
	res, werr := w.run(context.Background(), shown)
	if werr != nil {
		t.Fatalf("watch: %v", werr)
	}
	return res
}

func TestCancelWatchConfirmsATurnTheFirstKeysEnded(t *testing.T) {
	f := &fakeTurn{running: true, survives: 0}
	res := f.interrupt(t, watchOf(f, 3))
	if res.verdict != turnEnded || res.rounds != 1 || f.rounds != 1 {
		t.Fatalf("got %+v after %d rounds; want ended after 1", res, f.rounds)
	}
}

func TestCancelWatchRepeatsTheKeysWhileTheRecordShowsTheTurn(t *testing.T) {
	f := &fakeTurn{running: true, survives: 1}
	res := f.interrupt(t, watchOf(f, 3))
	if res.verdict != turnEnded || res.rounds != 2 || f.rounds != 2 {
		t.Fatalf("got %+v after %d rounds; want ended after 2", res, f.rounds)
	}
	// The repeat came right after a read that showed the turn running.
	for _, at := range f.readsAtRound {
		if !contains(f.runningReads, at) {
			t.Errorf("a repeat followed read %d, which did not show the turn running (running reads %v)", at, f.runningReads)
		}
	}
}

func TestCancelWatchGivesUpAfterTheTablesRounds(t *testing.T) {
	f := &fakeTurn{running: true, survives: -1}
	start := time.Now()
	res := f.interrupt(t, watchOf(f, 3))
	if res.verdict != turnStillRuns || res.rounds != 3 || f.rounds != 3 {
		t.Fatalf("got %+v after %d rounds; want still running after 3", res, f.rounds)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the watch took %v; its budget is 60ms", took)
	}
}

func TestCancelWatchNeverRepeatsAOneRoundHarness(t *testing.T) {
	f := &fakeTurn{running: true, survives: -1}
	res := f.interrupt(t, watchOf(f, 1))
	if res.verdict != turnStillRuns || f.rounds != 1 {
		t.Fatalf("got %+v after %d rounds; want still running after the one round", res, f.rounds)
	}
}

func TestCancelWatchSendsNothingMoreForATurnNeverShown(t *testing.T) {
	f := &fakeTurn{}
	res := f.interrupt(t, watchOf(f, 3))
	if res.verdict != turnNeverShown || f.rounds != 1 {
		t.Fatalf("got %+v after %d rounds; want no-turn after the first round only", res, f.rounds)
	}
}

func TestCancelWatchFollowsATurnThatShowsUpAfterTheKeys(t *testing.T) {
	// A prompt the agent took just before the keys: its turn is recorded
	// only after them, and outlives the first round.
	f := &fakeTurn{startsAfter: 3, survives: 1}
	res := f.interrupt(t, watchOf(f, 3))
	if res.verdict != turnEnded || f.rounds != 2 {
		t.Fatalf("got %+v after %d rounds; want ended after a repeat", res, f.rounds)
	}
}

// With no submit moments before and no turn reported, a record showing no
// turn after the keys is the answer: no share of the budget is spent
// waiting for a turn nothing started.
func TestCancelWatchDoesNotWaitForATurnNothingStarted(t *testing.T) {
	f := &fakeTurn{}
	w := watchOf(f, 3)
	w.mayStart, w.budget = false, 30*time.Second
	start := time.Now()
	res := f.interrupt(t, w)
	if res.verdict != turnNeverShown || f.rounds != 1 || f.reads != 2 {
		t.Fatalf("got %+v after %d rounds and %d reads; want no-turn from one read after the keys", res, f.rounds, f.reads)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("the watch took %v for a turn nothing started", took)
	}
	// A turn the first read after the keys shows is watched as any other.
	f = &fakeTurn{startsAfter: 2, survives: 1}
	w = watchOf(f, 3)
	w.mayStart = false
	if res := f.interrupt(t, w); res.verdict != turnEnded || f.rounds != 2 {
		t.Fatalf("got %+v after %d rounds; want a turn seen after the keys ended by a repeat", res, f.rounds)
	}
}

func TestCancelWatchSaysSoWhenTheRecordCannotBeRead(t *testing.T) {
	f := &fakeTurn{running: true, survives: -1}
	w := watchOf(f, 3)
	f.keys()
	f.err = errors.New("database is locked")
	res, err := w.run(context.Background(), true)
	if err != nil || res.verdict != turnUnreadable || f.rounds != 1 {
		t.Fatalf("got %+v, %v after %d rounds; want unreadable and no repeat", res, err, f.rounds)
	}
}

func TestCancelWatchStopsAtARepeatThatFails(t *testing.T) {
	f := &fakeTurn{running: true, survives: -1}
	gone := errors.New("the agent is gone")
	w := watchOf(f, 3)
	w.again = func(context.Context) error { return gone }
	f.keys()
	if _, err := w.run(context.Background(), true); !errors.Is(err, gone) {
		t.Fatalf("got %v; want the repeat's error", err)
	}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestCancelWatchDoesNotConfirmFromOneReadThatMissedTheTurn(t *testing.T) {
	f := &fakeTurn{running: true, survives: -1, blinks: map[int]bool{3: true}}
	res := f.interrupt(t, watchOf(f, 1))
	if res.verdict != turnStillRuns {
		t.Fatalf("got %+v; one read that missed a running turn confirmed its end", res)
	}
}

// A turn may be starting only after a recent submit the agent has not
// reported a turn's end since: an interrupt of an agent sent nothing of
// late, or whose last submit's turn is over, waits for no turn.
func TestSubmitPendingOnlyForARecentSubmitWithNoTurnEndSince(t *testing.T) {
	store := state.Store{Dir: t.TempDir()}
	var rec state.Record
	rec.Set(state.KeySpawnGen, "g1")
	tg := &task.Target{ID: "t1", Store: store, Task: &state.Task{ID: "t1", Record: rec}}
	now := time.Now()
	report := func(st string, turn, at time.Time) {
		a := state.AgentState{State: st, Gen: "g1", Event: "x", At: at, Harness: "gemini", Turn: turn}
		if err := state.WriteAtomic(store.AgentStatePath("t1"), a.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	if submitPending(tg, now) {
		t.Fatal("pending with no submit ever")
	}
	stamp := func(at time.Time) {
		if err := store.StampSubmitted("t1", at); err != nil {
			t.Fatal(err)
		}
	}
	stamp(now.Add(-time.Second))
	if !submitPending(tg, now) {
		t.Fatal("not pending a second after a submit, with no report at all")
	}
	report(state.ActivityIdle, now.Add(-3*time.Second), now.Add(-2*time.Second))
	if !submitPending(tg, now) {
		t.Fatal("not pending although the only turn end reported came before the submit")
	}
	// The end of the turn before the submit, reported after it.
	report(state.ActivityIdle, now.Add(-3*time.Second), now.Add(-500*time.Millisecond))
	if !submitPending(tg, now) {
		t.Fatal("not pending: a late report of the previous turn's end was taken for the new turn's")
	}
	report(state.ActivityBusy, now.Add(-700*time.Millisecond), now.Add(-700*time.Millisecond))
	if !submitPending(tg, now) {
		t.Fatal("not pending while the agent reports the turn busy")
	}
	report(state.ActivityIdle, now.Add(-700*time.Millisecond), now.Add(-500*time.Millisecond))
	if submitPending(tg, now) {
		t.Fatal("pending although the agent reported the end of a turn that began after the submit")
	}
	stamp(now.Add(-turnStartWindow - time.Second))
	report(state.ActivityBusy, now.Add(-time.Minute), now.Add(-time.Minute))
	if submitPending(tg, now) {
		t.Fatal("pending for a submit older than the window")
	}
}

// markingTurn is a record that marks a cancel by itself (gemini's
// "Request cancelled."), at marked.
type markingTurn struct {
	fakeTurn
	marked time.Time
	err    error
}

func (m *markingTurn) CancelledSince(at time.Time) (bool, error) {
	return !m.marked.IsZero() && !m.marked.Before(at), m.err
}

func TestACancelMarkSinceTheKeysProvesATurnNeverShown(t *testing.T) {
	keys := time.Date(2026, 12, 4, 15, 6, 56, 0, time.UTC)
	cases := []struct {
		name   string
		record turnRecord
		want   bool
	}{
		{"marked after the keys", &markingTurn{marked: keys.Add(5 * time.Millisecond)}, true},
		{"marked before the keys: another interrupt's", &markingTurn{marked: keys.Add(-time.Second)}, false},
		{"no mark", &markingTurn{}, false},
		{"unreadable", &markingTurn{marked: keys.Add(time.Millisecond), err: errors.New("half written")}, false},
		{"a record that marks no cancel", &fakeTurn{}, false},
	}
	for _, c := range cases {
		if got := markedCancel(c.record, keys); got != c.want {
			t.Errorf("%s: markedCancel = %v, want %v", c.name, got, c.want)
		}
	}
}

// One word per exit code: confirmed and no-turn only from the agent's own
// word, unconfirmed (which the verb exits 3 with) whenever nothing spoke.
func TestCancelVerdictIsNoTurnOnlyOnTheAgentsOwnWord(t *testing.T) {
	claude, _ := harness.Lookup("claude")
	grok, _ := harness.Lookup("grok")
	cases := []struct {
		name     string
		h        harness.Harness
		record   turnRecord // nil: no record fmctl reads
		report   string     // the agent's last reported activity, "" for none
		submit   bool       // text submitted a moment ago
		ack      string
		want     string
		proof    string
		reported bool
	}{
		{name: "record shows no turn", h: claude, record: &fakeTurn{}, want: CancelNoTurn, proof: ProofRecord},
		{name: "record shows no turn, a stale busy report", h: claude, record: &fakeTurn{}, report: state.ActivityBusy, reported: true, want: CancelNoTurn, proof: ProofRecord},
		{name: "record shows the turn end", h: claude, record: &fakeTurn{running: true}, want: CancelConfirmed, proof: ProofRecord},
		{name: "idle report, no record", h: claude, report: state.ActivityIdle, want: CancelNoTurn, proof: ProofTelemetry},
		{name: "idle report, a submit that may be starting a turn", h: claude, report: state.ActivityIdle, submit: true, want: CancelUnconfirmed, proof: ProofNone},
		{name: "busy report, no end seen", h: claude, report: state.ActivityBusy, reported: true, want: CancelUnconfirmed, proof: ProofNone},
		{name: "nothing at all", h: grok, want: CancelUnconfirmed, proof: ProofNone},
		{name: "an idle report of a harness that reports no prompts", h: grok, report: state.ActivityIdle, want: CancelUnconfirmed, proof: ProofNone},
		{name: "muse's log with no run", h: grok, ack: CancelNoTurn, want: CancelNoTurn, proof: ProofAck},
		{name: "muse's log with no run, a submit", h: grok, ack: CancelNoTurn, submit: true, want: CancelUnconfirmed, proof: ProofNone},
		{name: "an acknowledgement", h: grok, ack: CancelConfirmed, want: CancelConfirmed, proof: ProofAck},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := state.Store{Dir: t.TempDir()}
			var rec state.Record
			rec.Set(state.KeySpawnGen, "g1")
			tg := &task.Target{ID: "t1", Store: store, Task: &state.Task{ID: "t1", Record: rec}, Harness: c.h, HasHarness: true}
			now := time.Now()
			if c.report != "" {
				a := state.AgentState{State: c.report, Gen: "g1", Event: "x", At: now.Add(-time.Minute), Harness: c.h.Name, Turn: now.Add(-2 * time.Minute)}
				if err := state.WriteAtomic(store.AgentStatePath("t1"), a.Bytes()); err != nil {
					t.Fatal(err)
				}
			}
			if c.submit {
				if err := store.StampSubmitted("t1", now.Add(-time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			before := turnBefore{record: c.record}
			if f, ok := c.record.(*fakeTurn); ok {
				before.running = f.running
				f.keys()
			}
			v := &Verbs{waits: Waits{Poll: 2 * time.Millisecond, Settle: 20 * time.Millisecond, Cancel: 40 * time.Millisecond}}
			if c.ack == "" {
				c.ack = CancelUnconfirmed
			}
			got, err := v.confirmCancel(context.Background(), tg, before, c.reported, c.ack, now, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Cancel != c.want || got.Proof != c.proof {
				t.Errorf("cancel=%s proof=%s, want cancel=%s proof=%s", got.Cancel, got.Proof, c.want, c.proof)
			}
		})
	}
}
