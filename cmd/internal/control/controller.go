// Package control is fm-control, the control plane: a closed allowlist of
// lifecycle verbs addressed to an exact task id, each proving its
// postcondition or reporting it unconfirmed.
package control

import (
	"context"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/lifecycle"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/state"
)

// Controller runs verbs for one invocation.
type Controller struct {
	env    config.Env
	tun    config.Tunables
	runner backends.Runner
	print  cli.Printer
	waits  Waits
	verbs  *lifecycle.Verbs // interrupt and stop, shared with fm-teardown
}

// NewController builds a controller from the process edges.
func NewController(env config.Env, tun config.Tunables, r backends.Runner, p cli.Printer) *Controller {
	return &Controller{env: env, tun: tun, runner: r, print: p, waits: lifecycle.ReadWaits(tun.Control), verbs: lifecycle.New(tun, p)}
}

// Waits are the control plane's tunable deadlines (lifecycle owns them, as
// its exit waits on them too).
type Waits = lifecycle.Waits

// lockDelivery takes the task's input lock (see lifecycle.Verbs.LockDelivery).
func (c *Controller) lockDelivery(t *task.Target) (*state.Lock, error) {
	return c.verbs.LockDelivery(t)
}

// lifecycleRun is the body of one lifecycle verb, run once the task is
// resolved, locked and its verb row's ability checks have passed.
type lifecycleRun func(ctx context.Context, c *Controller, t *task.Target, opts VerbOptions) error

// lifecycleRuns gives each lifecycle row of the capability table its body;
// what a verb requires of the backend is read from the row, not from here.
var lifecycleRuns = map[string]lifecycleRun{
	"interrupt": func(ctx context.Context, c *Controller, t *task.Target, o VerbOptions) error {
		return c.runInterrupt(ctx, t, o.DropQueue)
	},
	"exit": func(ctx context.Context, c *Controller, t *task.Target, _ VerbOptions) error {
		return c.runExit(ctx, t)
	},
	"relaunch": func(ctx context.Context, c *Controller, t *task.Target, o VerbOptions) error {
		return c.runRelaunch(ctx, t, o.Relaunch)
	},
	"rebind": func(ctx context.Context, c *Controller, t *task.Target, _ VerbOptions) error {
		return c.runRebind(ctx, t)
	},
}

// authority is fm-control's gate (task.Authority).
func (c *Controller) authority() task.Authority {
	return task.NewAuthority("fm-control", c.tun, c.print.Warn)
}

// tasks opens tasks for fm-control's verbs.
func (c *Controller) tasks() task.Opener {
	return task.Opener{Tool: "fm-control", Env: c.env, Tunables: c.tun, Runner: c.runner}
}

// Lifecycle runs one lifecycle verb on task id, in the spec's refusal order:
// home, id shape, lock, record, identity, harness, backend abilities.
func (c *Controller) Lifecycle(ctx context.Context, verb, id string, opts VerbOptions) error {
	v, ok := harness.LookupVerb(verb)
	run := lifecycleRuns[verb]
	if !ok || !v.Lifecycle || run == nil {
		return fault.Usage("'%s' is not a control verb", verb)
	}
	t, lock, err := c.tasks().OpenLocked(id)
	if err != nil {
		if t != nil && !t.Ability.Adapter {
			return refuseByAbility(t, v, err)
		}
		return err
	}
	defer lock.Release()
	if err := t.RequireHarness("fm-control"); err != nil {
		return err
	}
	if v.NeedsVerified {
		if err := lifecycle.RequireClassifier(t, v.Name); err != nil {
			return err
		}
	}
	return run(ctx, c, t, opts)
}

// refuseByAbility explains a backend fmctl ships no adapter for (orca, cmux)
// by what the capability table says it cannot do, before the missing adapter.
// A verb whose row needs the classifier is refused for the missing one; the
// others (interrupt) act by keys, so the keys the backend lacks are named.
func refuseByAbility(t *task.Target, v harness.Verb, noAdapter error) error {
	if err := t.RequireHarness("fm-control"); err != nil {
		return err
	}
	if v.NeedsVerified {
		if err := lifecycle.RequireClassifier(t, v.Name); err != nil {
			return err
		}
	} else if err := lifecycle.CheckKeys(t); err != nil {
		return err
	}
	return noAdapter
}
