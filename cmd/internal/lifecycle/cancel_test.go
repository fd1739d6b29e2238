package lifecycle

import (
	"context"
	"errors"
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
	return cancelWatch{record: f, rounds: rounds, budget: 60 * time.Millisecond, poll: 2 * time.Millisecond, again: f.again}
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
