package control

import (
	"context"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/lifecycle"
	"fmctl/cmd/internal/task"
)

func (c *Controller) runInterrupt(ctx context.Context, t *task.Target) error {
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
	gate := func(before backends.Observation) error {
		if before.State != backends.StateAlive && before.State != backends.StateUnverified {
			return lifecycle.RefuseState(t, "interrupt", before)
		}
		return t.Gate(before, "fm-control")
	}
	// A backend that gates a key itself reads the state with the first
	// key (tmux: one call, checked server-side); any other is read first.
	if _, ok := t.Backend.(backends.GatedKeySender); !ok {
		if err := gate(t.Backend.AgentState(ctx, t.Endpoint)); err != nil {
			return err
		}
		gate = nil
	}
	res, err := c.verbs.Interrupt(ctx, t, gate, lock)
	if err != nil {
		return err
	}
	out := cli.Outcome{Word: "interrupt-delivered", ID: t.ID}
	out.Add("harness", t.Harness.Name).Add("backend", t.BackendName).
		Add("verified", res.Verified).Add("cancel", res.Cancel).
		AddJSON("endpoint", t.Endpoint.Target).AddJSON("state", string(res.After.State))
	c.print.Outcome(out)
	return nil
}
