package control

import (
	"testing"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/lifecycle"
)

// The queue facts of an interrupt outcome: what became of the messages
// fm-send left queued, each state with its own tokens and no other.
func TestQueueFacts(t *testing.T) {
	for _, c := range []struct {
		name string
		res  lifecycle.InterruptResult
		want string
	}{
		{"no queue, not asked", lifecycle.InterruptResult{}, "interrupt-delivered t1"},
		{"flushed, busy", lifecycle.InterruptResult{Queue: lifecycle.QueueFlushed, Flushed: []string{"m1", "m2"}, FlushedRunning: true},
			"interrupt-delivered t1 queue=flushed activity=busy flushed=m1,m2"},
		{"flushed, answered", lifecycle.InterruptResult{Queue: lifecycle.QueueFlushed, Flushed: []string{"m1"}},
			"interrupt-delivered t1 queue=flushed activity=idle flushed=m1"},
		{"dropped to the record", lifecycle.InterruptResult{Queue: lifecycle.QueueDropped, Dropped: []string{"m1"}, DroppedTo: lifecycle.DroppedToRecord, Untaken: []string{"m2"}},
			"interrupt-delivered t1 queue=dropped dropped=m1 dropped_to=record untaken=m2"},
		{"dropped to the composer", lifecycle.InterruptResult{Queue: lifecycle.QueueDropped, Dropped: []string{"m1"}, DroppedTo: lifecycle.DroppedToComposer},
			"interrupt-delivered t1 queue=dropped dropped=m1 dropped_to=composer"},
		{"only untaken", lifecycle.InterruptResult{Queue: lifecycle.QueueDropped, Untaken: []string{"m2"}},
			"interrupt-delivered t1 queue=dropped untaken=m2"},
		{"none queued", lifecycle.InterruptResult{Queue: lifecycle.QueueNone}, "interrupt-delivered t1 queue=none"},
	} {
		out := cli.Outcome{Word: "interrupt-delivered", ID: "t1"}
		queueFacts(&out, c.res)
		if got := out.Line(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
