package lifecycle

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/deliver"
	"fmctl/state"
)

// lateRecord is an agent's record that takes a message only at a given
// moment: a queue flushed after the cancel, recorded late.
type lateRecord struct {
	mu  sync.Mutex
	at  time.Time
	msg string
}

func (r *lateRecord) UserMessages() ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Now().Before(r.at) {
		return nil, nil
	}
	return []string{r.msg}, nil
}

func (r *lateRecord) TurnRunning() (bool, error) { return true, nil }

// A flush the screen shows under way is watched past flushWait until the
// record takes it; one the screen does not show is not.
func TestFlushedWaitsForAFlushUnderWay(t *testing.T) {
	for _, c := range []struct {
		underWay bool
		want     []string
	}{
		{true, []string{"m1"}},
		{false, nil},
	} {
		r := &lateRecord{at: time.Now().Add(300 * time.Millisecond), msg: "queued while retrying"}
		q := queued{reader: r, sends: []state.Send{{MessageID: "m1", Digest: deliver.MessageDigest(r.msg)}}}
		ids, running := q.flushed(context.Background(), 50*time.Millisecond, &backends.Backoff{Max: 10 * time.Millisecond}, func() bool { return c.underWay })
		if !slices.Equal(ids, c.want) || running != (c.want != nil) {
			t.Errorf("under way %v: flushed %v running %v, want %v", c.underWay, ids, running, c.want)
		}
	}
}
