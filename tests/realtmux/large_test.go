package realtmux

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// largeMessage is n bytes in 100-byte lines ending with a unique tail, as
// tests/bench sends them.
func largeMessage(n int, tag string) string {
	var b strings.Builder
	line := strings.Repeat("lorem ipsum dolor sit amet ", 4)[:99] + "\n"
	tail := "end of " + tag
	for b.Len()+len(line)+len(tail) < n {
		b.WriteString(line)
	}
	b.WriteString(strings.Repeat("x", n-b.Len()-len(tail)))
	b.WriteString(tail)
	return b.String()
}

// Large messages back to back (200 KB, then 1 MB twice, the last two with
// the same tail) are each confirmed only once the agent holds all of it:
// every send exits 0 and its submit is exactly the message.
func TestLargeMessagesBackToBackArriveWholeBeforeTheyAreConfirmed(t *testing.T) {
	for _, h := range []string{"claude", "codex"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			largeMessagesBackToBack(t, h)
		})
	}
}

// largeMessagesBackToBack sends 200 KB, then 1 MB twice with the same tail,
// to a fake agent of harness h (each collapses a long paste into its own
// placeholder).
func largeMessagesBackToBack(t *testing.T, h string) {
	s := newServer(t)
	a := s.startAgent("t1", h)
	for i, size := range []int{200_000, 1_000_000, 1_000_000} {
		msg := largeMessage(size, fmt.Sprintf("%d bytes", size))
		r := s.run(msg, nil, "fm-send", "t1", "-")
		wantCode(t, r, 0, fmt.Sprintf("fm-send t1 - (%d bytes, send %d)", size, i+1))
		t.Logf("send %d, %d bytes: %v, %s", i+1, size, r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stdout))
		got := a.submitted()
		if len(got) != i+1 {
			t.Fatalf("send %d confirmed with %d submits on record, want %d", i+1, len(got), i+1)
		}
		if last := got[len(got)-1]; last != msg {
			t.Fatalf("send %d was confirmed, but the agent submitted %d of its %d bytes (first difference at %d)", i+1, len(last), len(msg), firstDiff(last, msg))
		}
	}
}
