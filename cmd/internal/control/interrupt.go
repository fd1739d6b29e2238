package control

import (
	"context"
	"strconv"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/lifecycle"
	"fmctl/cmd/internal/press"
	"fmctl/cmd/internal/task"
)

func (c *Controller) runInterrupt(ctx context.Context, t *task.Target, dropQueue bool) error {
	if err := lifecycle.CheckKeys(t); err != nil {
		return err
	}
	// The state is read under the input lock, so no relaunch or exit can
	// change the agent between this read and the keys.
	lock, err := c.lockDelivery(t)
	if err != nil {
		return err
	}
	defer lock.Release()
	// A backend that gates a key itself reads the state with the first
	// key (tmux: one call, checked server-side); any other is read first,
	// and a repeat round reads and gates the state again itself.
	gate, err := press.GateOnce(ctx, t.Backend, t.Endpoint, lifecycle.InterruptGate(t))
	if err != nil {
		return err
	}
	res, err := c.verbs.Interrupt(ctx, t, gate, lock, dropQueue)
	if err != nil {
		return err
	}
	out := cli.Outcome{Word: "interrupt-delivered", ID: t.ID}
	out.Add("harness", t.Harness.Name).Add("backend", t.BackendName).
		Add("verified", res.Verified).Add("cancel", res.Cancel).Add("proof", res.Proof).
		AddJSON("endpoint", t.Endpoint.Target).AddJSON("state", string(res.After.State))
	out.Put(fault.Fact{Key: "rounds", Text: strconv.Itoa(res.Rounds), Value: res.Rounds, JSONOnly: true})
	if res.Cleared != "" {
		out.AddQuoted("cleared", res.Cleared)
	}
	queueFacts(&out, res)
	c.print.Outcome(out)
	return nil
}

// queueFacts says what became of the messages fm-send left queued behind
// the cancelled turn: flushed into a new turn (a caller must not read exit
// 0 as an agent at rest when activity=busy), dropped (--drop-queue), or
// none queued; and those the agent let go of, untaken.
func queueFacts(out *cli.Outcome, res lifecycle.InterruptResult) {
	if res.Queue != "" {
		out.Add("queue", res.Queue)
	}
	if len(res.Flushed) > 0 {
		activity := "idle"
		if res.FlushedRunning {
			activity = "busy"
		}
		out.Add("activity", activity).Put(fault.IDs("flushed", res.Flushed))
	}
	if len(res.Dropped) > 0 {
		out.Put(fault.IDs("dropped", res.Dropped)).Add("dropped_to", res.DroppedTo)
	}
	if len(res.Untaken) > 0 {
		out.Put(fault.IDs("untaken", res.Untaken))
	}
}
