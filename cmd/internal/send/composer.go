package send

import (
	"context"
	"time"

	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
)

// prepareComposer makes the composer of a harness with verified screen
// signatures fit to type into: it waits (bounded by FM_SEND_READY_WAIT) for
// the agent to be ready instead of typing into a half-drawn TUI, refuses at
// a blocking dialog (text typed there goes to the dialog: gemini stores it
// as its API key), and empties held text with the harness's verified clear,
// proving it empty, or refuses naming it. It reports whether it cleared.
func prepareComposer(ctx context.Context, t *task.Target, sig harness.ScreenSig, v config.SendVars) (bool, error) {
	poll, limit := v.Poll, v.ReadyWait
	st, ready := deliver.WaitReady(ctx, t.Backend, t.Endpoint, sig, limit, poll)
	facts := []string{"id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target}
	if st.Dialog != "" {
		err := fault.Failed("task %s's %s agent is at its %s dialog; text typed now would go to the dialog, so nothing was sent", t.ID, t.Harness.Name, st.Dialog).Coded(fault.EDialog).
			With(append(facts, "ready", "blocked", "dialog", st.Dialog)...).
			Hint("answer the dialog in the pane, then send again")
		if d, ok := sig.Dialog(st.Dialog); ok && d.Answer != "" {
			err = err.Hint("at the %s dialog %s: fm-send %s --key <Key>", d.Name, d.Answer, t.ID)
			if d.Waits == harness.WaitPermission {
				err = err.Hint("or fm-control interrupt %s, which denies the tool call and ends the turn", t.ID)
			}
		}
		return false, err
	}
	if !ready {
		return false, fault.Failed("task %s's %s agent did not show a ready composer within %s (FM_SEND_READY_WAIT); nothing was sent", t.ID, t.Harness.Name, limit).Coded(fault.ENotReady).
			With(append(facts, "ready", "starting")...).
			Hint("look at the pane (the agent may still be starting), then send again")
	}
	if st.Composer != harness.ComposerHolding {
		return false, nil
	}
	if err := deliver.ClearHeld(ctx, t.Backend, t.Endpoint, sig, st, t.Ability.CanDeliver, 2*time.Second, poll); err != nil {
		return false, fault.Failed("task %s: %v; the message would be glued onto it, so nothing was sent", t.ID, err).Coded(fault.EComposerHeld).
			With(append(facts, "held", st.HeldText())...).
			Hint("look at the pane and clear that input (or submit it deliberately), then send again")
	}
	return true, nil
}
