package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/state"
)

// capturedScreens is a backend whose screen is a list of real captures,
// one a read, the last repeated.
type capturedScreens struct {
	blankScreen
	screens [][]string
	reads   int
}

func (b *capturedScreens) Capture(context.Context, backends.Endpoint) (backends.Screen, error) {
	i := min(b.reads, len(b.screens)-1)
	b.reads++
	return backends.Screen{Lines: b.screens[i]}, nil
}

func readCapture(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "captures", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

// pi writes a failed attempt to its session file, then waits out the retry
// with nothing recorded: an interrupt of it is never no-turn on the
// record's word, and says what the screen shows of the retry after the
// keys (tests/captures/pi-0.73.1: its loader, its working line, and its
// idle composer).
func TestAnUnrecordedRetryIsNeverNoTurn(t *testing.T) {
	pi, _ := harness.Lookup("pi")
	retrying := readCapture(t, "pi-0.73.1/retrying-backoff.txt")
	idle := readCapture(t, "pi-0.73.1/composer-empty.txt")
	working := readCapture(t, "pi-0.73.1/busy.txt")
	for _, c := range []struct {
		name    string
		screens [][]string
		want    turnBefore
		retry   string
	}{
		{"the keys end the retry", [][]string{retrying, idle}, turnBefore{retrying: true}, RetryGone},
		{"the retry still drawn", [][]string{retrying}, turnBefore{retrying: true}, RetryDrawn},
		{"an attempt under way, which pi records only at its end", [][]string{working, idle}, turnBefore{retrying: true}, RetryGone},
		{"no retry drawn", [][]string{idle}, turnBefore{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &capturedScreens{screens: c.screens}
			store := state.Store{Dir: t.TempDir()}
			var rec state.Record
			rec.Set(state.KeySpawnGen, "g1")
			tg := &task.Target{ID: "t1", Store: store, Task: &state.Task{ID: "t1", Record: rec}, Backend: b, Harness: pi, HasHarness: true}
			v := &Verbs{waits: Waits{Poll: 2 * time.Millisecond, Settle: 20 * time.Millisecond, Cancel: 40 * time.Millisecond}}
			v.openRecord = func(*task.Target, backends.Observation) (turnRecord, bool) { return &fakeTurn{}, true }
			before := v.readTurn(context.Background(), tg, &backends.Observation{State: backends.StateAlive})
			if before.running || before.retrying != c.want.retrying {
				t.Fatalf("before the keys: running=%v retrying=%v, want retrying=%v", before.running, before.retrying, c.want.retrying)
			}
			got, err := v.confirmCancel(context.Background(), tg, before, false, CancelUnconfirmed, time.Now(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.retry == "" && (got.Cancel != CancelNoTurn || got.Proof != ProofRecord):
				t.Errorf("cancel=%s proof=%s, want no-turn on the record's word", got.Cancel, got.Proof)
			case c.retry != "" && (got.Cancel != CancelUnconfirmed || got.Retry != c.retry):
				t.Errorf("cancel=%s proof=%s retry=%q, want unconfirmed with retry=%s", got.Cancel, got.Proof, got.Retry, c.retry)
			}
		})
	}
}
