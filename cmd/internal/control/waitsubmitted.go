package control

import (
	"context"
	"fmt"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/state"
)

// WaitSubmitted polls the agent's own record until it holds the message
// fm-send left unconfirmed (state/<id>.sends) exactly once more than before
// that send, or limit passes. The screen is never the proof: exit 0 means
// the record shows it. A duplicate in the record is exit 3; an agent that
// is no longer the task's own live one ends the wait as every wait does.
func (c *Controller) WaitSubmitted(ctx context.Context, id, messageID string, limit time.Duration) error {
	const cond = "submitted"
	t, err := c.tasks().Open(id)
	if err != nil {
		return err
	}
	send, ok, err := t.Store.FindSend(t.ID, messageID)
	if err != nil {
		return fault.Failed("%w; cannot tell which message to wait for", err)
	}
	if !ok {
		return fault.Failed("task %s's send ledger (state/%s.sends) holds no message %s", t.ID, t.ID, messageID).Coded(fault.ENoSuchMessage).
			With("id", t.ID, "for", cond, "message", messageID).
			Hint("only a send to an agent whose record fmctl reads is kept, the newest 256; a confirmed one (exit 0) needs no wait").
			Hint("copy the message= fact from that fm-send's error line")
	}
	if send.Harness != t.RecordedHarness {
		return fault.Failed("message %s was sent to task %s's %s agent, but the task now records %s, whose record cannot hold it", messageID, t.ID, send.Harness, t.RecordedHarness).Coded(fault.ENoSuchMessage).
			With("id", t.ID, "for", cond, "message", messageID).
			Hint("look at the agent's transcript to see whether it arrived before the relaunch")
	}
	if send.Verdict == state.VerdictUntaken {
		t0 := t.Backend.AgentState(ctx, t.Endpoint)
		// Only the text in the record outweighs the interrupt's word: a
		// log's prompt of its length may be another message's.
		if p := recordProof(t, t0, send); p != deliver.Recorded && p != deliver.Duplicated {
			return fault.Failed("message %s never reached task %s's %s agent, which let it go", messageID, t.ID, t.RecordedHarness).Coded(fault.EDeliveryFailed).
				With("id", t.ID, "for", cond, "message", messageID, "verdict", state.VerdictUntaken).
				Hint("an interrupt found the agent idle, its queue empty and the text not in its record").
				Hint("send it again if it still matters: fm-send %s -- <text>", t.ID)
		}
	}
	proof := deliver.Unreadable
	// A queued message is taken when a turn ends or starts, which the
	// agent's own reports show first.
	pause := c.idlePause(t.Store.AgentStatePath(t.ID), t.Store.AgentEventsDir(t.ID), t.Store.MetaPath(t.ID))
	return c.poll(ctx, id, cond, limit, pause, func(waited time.Duration) (bool, error) {
		obs := t.Backend.AgentState(ctx, t.Endpoint)
		if ctx.Err() != nil { // poll says interrupted
			return false, nil
		}
		if err := refuseWaitState(t, cond, obs); err != nil {
			return false, err
		}
		proof = recordProof(t, obs, send)
		switch proof {
		case deliver.Recorded, deliver.Logged:
			out := cli.Outcome{Word: "reached", ID: t.ID}
			out.Add("for", cond).Add("message", messageID).Add("proof", proof.Source()).Add("state", string(obs.State)).
				Put(fault.Fact{Key: "waited_ms", Value: waited.Milliseconds(), Token: "waited", Text: fmt.Sprintf("%.2fs", waited.Seconds())})
			c.print.Outcome(out)
			return true, nil
		case deliver.Duplicated:
			return false, fault.Unconfirmed("task %s's %s record holds message %s more than once since it was sent: it reached the agent twice", t.ID, t.RecordedHarness, messageID).Coded(fault.EDuplicated).
				With("id", t.ID, "for", cond, "message", messageID, "proof", string(proof)).
				Hint("do not send it again; tell the agent to ignore the repeat if it matters")
		}
		return false, nil
	}, func() error {
		e := fault.Timeout("message %s did not reach task %s's %s record within %s (proof=%s)", messageID, t.ID, t.RecordedHarness, limit, proof).
			With("id", t.ID, "for", cond, "message", messageID, "proof", string(proof))
		if key, ok := strandedQueue(ctx, t); ok {
			return e.Hint("the agent is idle and its queue still holds a text, which it has not submitted; the next fm-send %s submits it first (%s on the empty composer), or press it now: fm-send %s --key %s", t.ID, key, t.ID, key)
		}
		return e.Hint("do not resend it while the agent may still take it (a queued message is submitted when the turn ends); wait again, or look at the pane")
	})
}

// strandedQueue reports whether the agent's screen shows it idle with a
// text its queue still holds, and the key that submits it (the harness's
// QueueRelease; cline once kept a queued text after its turn ended).
func strandedQueue(ctx context.Context, t *task.Target) (harness.Key, bool) {
	sig, ok := t.Harness.Screen()
	if !ok || sig.QueueRelease == "" {
		return "", false
	}
	s, err := t.Backend.Capture(ctx, t.Endpoint)
	if err != nil {
		return "", false
	}
	_, stranded := sig.StrandedQueue(s.Lines)
	return sig.QueueRelease, stranded
}

// recordProof reads the live agent's record once for a message the send
// ledger kept; a record fmctl cannot find or read is unreadable, which a
// later look may still change.
func recordProof(t *task.Target, obs backends.Observation, send state.Send) deliver.Proof {
	r, ok := t.AgentRecord(obs)
	if !ok {
		return deliver.Unreadable
	}
	return deliver.SentWatch(r, send).Check()
}
