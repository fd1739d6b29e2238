// Package send is fm-send, the data plane: conversational text for an agent
// to read, typed once and submitted as one message, or one named key.
package send

import (
	"context"
	"errors"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/press"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// Request is one parsed fm-send invocation.
type Request struct {
	ID   string
	Text string
	Key  string // set for --key
	// AllowExit lets --key send a key the capability table says quits the
	// harness (codex's C-c at idle); without it such a key is refused.
	AllowExit bool
	JSON      bool
	// FromStdin: the text is read from standard input (`fm-send <id> -`),
	// which keeps a long or multi-line message out of argv.
	FromStdin bool
	// DiscardDraft lets the message clear text a person left in the
	// composer; without it such a draft is refused, and kept.
	DiscardDraft bool
	// WhenReady waits, up to Timeout, for an agent that would throw the
	// text away now (pi in its retry back-off) to take it; without it such
	// a send is refused before anything is typed.
	WhenReady bool
	Timeout   time.Duration
}

// Sender runs fm-send requests.
type Sender struct {
	Env      config.Env
	Tunables config.Tunables
	Runner   backends.Runner
	Print    cli.Printer
}

// Run executes one request.
func (s Sender) Run(ctx context.Context, req Request) error {
	tasks := task.Opener{Tool: "fm-send", Env: s.Env, Tunables: s.Tunables, Runner: s.Runner}
	home, err := tasks.Begin(req.ID)
	if err != nil {
		return err
	}
	var key harness.Key
	if req.Key != "" {
		k, ok := harness.ParseKey(req.Key)
		if !ok {
			return fault.Usage("key '%s' is not a named key; fm-send --key accepts %s%s", phrase.Printable(req.Key), keyList(), phrase.DidYouMean(req.Key, harness.KeyNames()))
		}
		key = k
	}
	text := req.Text
	if req.Key == "" {
		if text, err = deliver.CheckText(text); errors.Is(err, deliver.ErrEmptyText) {
			return fault.Usage("%v; nothing was sent", err)
		} else if err != nil {
			return fault.Failed("%v; nothing was sent", err)
		}
	}
	t, err := tasks.Load(home, req.ID)
	if err != nil {
		// A backend fmctl has no adapter for still declares its abilities; a
		// key it could never deliver is refused as that, naming the key.
		if t != nil && req.Key != "" && !t.Ability.CanDeliver(key) {
			return refuseKey(t, key)
		}
		return err
	}
	if req.Key != "" {
		return s.sendKey(ctx, t, key, req.AllowExit)
	}
	return s.sendText(ctx, t, text, req)
}

func keyList() string {
	return strings.Join(harness.KeyNames(), ", ")
}

// lockDelivery takes the task's input lock, then passes the gate: under the
// lock, nothing can stop or replace the agent between the gate's read and
// the keys typed after it.
func lockDelivery(ctx context.Context, t *task.Target, v config.SendVars) (*state.Lock, backends.Observation, error) {
	l, err := lockInput(t, v)
	if err != nil {
		return nil, backends.Observation{}, err
	}
	obs, err := t.RequireAgent(ctx, "fm-send")
	if err != nil {
		l.Release()
		return nil, obs, err
	}
	return l, obs, nil
}

func (s Sender) sendKey(ctx context.Context, t *task.Target, key harness.Key, allowExit bool) error {
	if !t.Ability.CanDeliver(key) {
		return refuseKey(t, key)
	}
	if eff := t.Harness.KeyEffect(key); t.HasHarness && eff.EndsAgent() && !allowExit {
		return refuseEndingKey(t, eff)
	}
	// After an Escape, a harness that restores the cancelled prompt into its
	// composer needs its clear key too, or the next message glues onto it.
	clear := harness.Key("")
	if key == harness.KeyEscape && t.HasHarness && t.Harness.ClearKey != "" {
		clear = t.Harness.ClearKey
		if !t.Ability.CanDeliver(clear) {
			return fault.Failed("harness %s needs %s after Escape to clear its composer, which the %s backend cannot deliver; nothing was sent", t.Harness.Name, clear, t.BackendName).Coded(fault.EKeyUnsupported)
		}
	}
	lock, err := lockInput(t, s.Tunables.Send)
	if err != nil {
		return err
	}
	defer lock.Release()
	keys := []harness.Key{key}
	if clear != "" {
		keys = append(keys, clear)
	}
	// The clear passes the gate too: the Escape may have ended the agent.
	k := pressKeys(t, lock)
	p, err := k.Sequence(ctx, keys, press.Opts{})
	if p.Sent > 0 && t.HasHarness && (key == t.Harness.InterruptKey || t.Harness.KeyEffect(key).CancelsTurn()) {
		// A turn this key cancels may come back as its prompt in the
		// composer, which the next send may then clear as fmctl's own.
		_ = t.Store.MarkInterrupted(t.ID, time.Now())
	}
	if p.Sent == 0 && err != nil {
		return err
	} else if err != nil {
		return fault.Failed("Escape reached %s, but the %s composer could not be cleared with %s (%v)", t.Endpoint.Target, t.Harness.Name, clear, err).Coded(fault.EDeliveryFailed).
			Hint("if the agent is still there, its composer holds the restored prompt: clear it before sending the next message")
	}
	k.Settle(keys[len(keys)-1])
	out := cli.Outcome{Word: "key-delivered", ID: t.ID}
	out.Add("key", string(key)).Add("backend", t.BackendName).Add("endpoint", t.Endpoint.Target)
	if clear != "" {
		out.Add("clear", string(clear))
	}
	s.Print.Outcome(out)
	return nil
}

func lockInput(t *task.Target, v config.SendVars) (*state.Lock, error) {
	return t.Store.LockInput(t.ID, v.LockWait)
}

// sendGate is what every key fm-send presses passes: the task's own agent.
func sendGate(t *task.Target) func(backends.Observation) error {
	return func(obs backends.Observation) error { return t.Gate(obs, "fm-send") }
}

// pressKeys presses fm-send's keys into the task's agent, under its input
// lock, each past the gate.
func pressKeys(t *task.Target, lock *state.Lock) press.Keys {
	return press.Keys{Backend: t.Backend, Endpoint: t.Endpoint, Gate: sendGate(t), Gap: t.Harness.PressGap, Hold: lock,
		Words: press.SendWords(t.ID, t.Endpoint.Target, t.BackendName)}
}

func refuseKey(t *task.Target, key harness.Key) error {
	return fault.Failed("the %s backend cannot deliver key %s; nothing was sent", t.BackendName, key).Coded(fault.EKeyUnsupported)
}

// refuseEndingKey names what the key would do: a key that quits the agent
// is a lifecycle action, which exit performs with proof that it stopped.
func refuseEndingKey(t *task.Target, eff harness.KeyEffect) error {
	return fault.Failed("key %s ends %s (at idle: %s; during a turn: %s), so nothing was sent", eff.Key, t.Harness.Name, eff.Idle, eff.Busy).
		Coded(fault.EKeyEndsAgent).With("id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target).
		Hint("to stop the agent, use fm-control exit %s, which proves it stopped", t.ID).
		Hint("to send the key anyway, add --allow-exit")
}

// submitOptions are the submit budgets, with the tunable ones from v.
func submitOptions(v config.SendVars) deliver.Options {
	o := deliver.DefaultOptions()
	o.Retries, o.ConfirmWait, o.Poll = v.Retries, v.Sleep, v.Poll
	return o
}

func (s Sender) sendText(ctx context.Context, t *task.Target, text string, req Request) error {
	if t.Kind == harness.KindSecondmate {
		text = deliver.Mark(text)
	}
	o := submitOptions(s.Tunables.Send)
	// Enter waits until a completion popup has settled so it cannot be swallowed.
	o.Popup = t.Harness.OpensPopup(text)
	// A retried Enter passes the gate again: the first may have ended the
	// agent (a sent /exit).
	o.EnterGate = sendGate(t)
	if sig, ok := t.Harness.Screen(); ok && t.HasHarness && req.WhenReady {
		if err := awaitTakesInput(ctx, t, sig, s.Tunables.Send, req.Timeout); err != nil {
			return err
		}
	}
	queue, err := t.Store.LockSends(t.ID, s.Tunables.Send.LockWait)
	if err != nil {
		return err
	}
	defer queue.Release()
	lock, obs, err := lockDelivery(ctx, t, s.Tunables.Send)
	if err != nil {
		return err
	}
	defer lock.Release()
	var cleared *emptied
	released := ""
	if sig, ok := t.Harness.Screen(); ok && t.HasHarness {
		if cleared, err = prepareComposer(ctx, t, sig, s.Tunables.Send, req); err != nil {
			return err
		}
		if firstTurnBusy(ctx, t, sig, obs) {
			return delivery{t: t, emptied: cleared}.emptiedFacts(refuseFirstTurn(t, []string{"id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target}))
		}
		if released, err = releaseStranded(ctx, t, sig, s.Tunables.Send, pressKeys(t, lock)); err != nil {
			var fe *fault.Error
			if errors.As(err, &fe) {
				return delivery{t: t, emptied: cleared}.emptiedFacts(fe)
			}
			return err
		}
		o.Screen = &sig
	} else if err := refuseHeld(ctx, t); err != nil {
		return err
	}
	d := delivery{t: t, text: text, at: time.Now(), emptied: cleared, released: released}
	if d.messageID, err = state.NewMessageID(d.at); err != nil {
		return fault.Failed("%w; nothing was sent", err)
	}
	// The baseline is read before typing: an identical message sent
	// earlier must not count as this one.
	if r, ok := t.AgentRecord(obs); ok {
		if w, err := deliver.StartWatch(r, text); err == nil {
			d.watch = &w
		}
	}
	// Stamped before the Enter: an interrupt racing this send must know a
	// turn may be starting. A stamp that cannot be written costs only that.
	_ = t.Store.StampSubmitted(t.ID, d.at)
	if d.watch != nil && d.watch.Log != nil {
		o.NothingTaken = d.watch.NothingTaken
	}
	res := deliver.Submit(ctx, t.Backend, t.Endpoint, text, o)
	// Kept under the input lock, which an interrupt takes to mark it: the
	// next send clears this text if the agent puts it back after that
	// interrupt, or if the composer never let go of it. A record that
	// cannot be written makes such text a draft: refused, never lost.
	_ = t.Store.RecordTyped(t.ID, res.Typed(text, d.at))
	// No key of this send follows: the input lock goes now, so an
	// interrupt or an exit does not wait on the agent's record below (the
	// send queue still keeps the next send out until it is judged).
	lock.Release()
	switch res.Verdict {
	case deliver.SendFailed:
		return d.emptiedFacts(fault.Failed("text not sent to %s (%s send failed: %v); nothing may be assumed delivered", t.Endpoint.Target, t.BackendName, backends.StderrOf(res.Err)).Coded(fault.EDeliveryFailed).
			With("id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target, "submit", "failed"))
	case deliver.Queued:
		d.ledger("queued")
		return d.facts(fault.Unconfirmed("%s took the text into its queue behind the running turn, not as a submitted message", t.Harness.Name).
			Hint("it submits everything queued as one message when the turn ends, so this text may reach it joined to others; do not resend it").
			Hint("when (and whether) it reached the agent's record: fm-control wait %s --for submitted --message-id %s", t.ID, d.messageID), "queued")
	}
	if res.Replaced != "" {
		return d.emptiedFacts(fault.Failed("%s's command popup put %q in the composer in place of the typed command when Enter chose it, so nothing was submitted", t.Harness.Name, deliver.Clip(res.Replaced, draftLineRunes)).Coded(fault.EDeliveryFailed).
			With("id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target, "submit", "replaced", "replaced", res.Replaced).
			Hint("%s may not know that command: its /help lists the ones it has", t.Harness.Name).
			Hint("the next fm-send clears that text, which fmctl's keys put there"))
	}
	switch res.Verdict {
	case deliver.Pending:
		return d.facts(fault.Unconfirmed("text typed into %s, but it still sits in the composer after %d Enter", t.Endpoint.Target, res.Enters).
			Hint("look at the pane, then send '--key Enter' only if the composer still holds the text; do not retype it"), "unconfirmed")
	}
	// The screen says the composer let go of the text (or could not tell);
	// only the agent's own record says it was submitted.
	if d.watch == nil {
		return d.facts(fault.Unconfirmed("text delivered to %s (composer: %s after %d Enter), but fmctl cannot read %s's own record, so the submit is unconfirmed", t.Endpoint.Target, res.Verdict, res.Enters, t.RecordedHarness).
			Hint("look at the pane or the agent's transcript before sending it again"), "unconfirmed")
	}
	proof, opened := d.watch.AwaitOr(ctx, s.Tunables.Send.RecordWait, s.Tunables.Send.RecordPoll, dialogWatch(ctx, t, text, o.Screen))
	switch {
	case opened != "":
		// The command opened a dialog of the agent's own: nothing reaches
		// its record while the dialog is up (claude writes /help's entry
		// when it closes), so the record wait would only block the caller.
		d.ledger("unrecorded")
		return d.facts(fault.Unconfirmed("%s opened its %s dialog for %s, which its record does not show while the dialog is up", t.Harness.Name, opened, deliver.Clip(text, draftLineRunes)).
			With("dialog", opened).
			Hint("close it with fm-send %s --key Escape before sending text; the next fm-send refuses while it is up", t.ID), "dialog")
	case proof == deliver.Recorded && d.watch.Joined():
		// The queue of a turn that ended as the text was typed took it
		// (qwen, in the tier's outage world): one message with others.
		d.ledger("queued")
		return d.facts(fault.Unconfirmed("%s took the text into its queue and submitted it joined to the other texts queued there, as one message", t.Harness.Name).
			Hint("do not resend it: the agent has it, with the texts before it"), "queued")
	case proof == deliver.Recorded, proof == deliver.Logged:
		// Logged: cline's log says it took a prompt of exactly this length
		// as a turn of its own since the Enter; its record gets the text
		// when that turn ends.
		d.ledger("sent")
		out := cli.Outcome{Word: "sent", ID: t.ID}
		out.Add("backend", t.BackendName).Add("endpoint", t.Endpoint.Target).
			Put(fault.Int("bytes", len(text)), fault.Int("enters", res.Enters), fault.Bool("marked", t.Kind == harness.KindSecondmate)).
			Add("submit", "confirmed").Add("proof", proof.Source()).Add("message", d.messageID)
		if cleared != nil && cleared.draft {
			out.AddQuoted("discarded", cleared.text)
		} else if cleared != nil {
			out.AddQuoted("cleared", cleared.text)
		}
		if released != "" {
			out.AddQuoted("released", released)
		}
		s.Print.Outcome(out)
		return nil
	case proof == deliver.Enqueued:
		// claude's record (or cline's log) says it took the text into its
		// queue: no wait for a turn that may run for minutes.
		d.ledger("queued")
		return d.facts(fault.Unconfirmed("%s took the text into its queue behind the running turn, its record says, not as a submitted message", t.Harness.Name).
			Hint("it sends the text when the turn ends or is interrupted; do not resend it").
			Hint("when (and whether) it reached the agent's record: fm-control wait %s --for submitted --message-id %s", t.ID, d.messageID), "queued")
	case proof == deliver.Duplicated:
		d.ledger("duplicated")
		return d.facts(fault.Unconfirmed("%s's record holds this text more than once since the send: it reached the agent twice", t.RecordedHarness).Coded(fault.EDuplicated).
			Hint("do not send it again; tell the agent to ignore the repeat if it matters"), "duplicated")
	}
	d.ledger("unrecorded")
	return d.facts(fault.Unconfirmed("text delivered to %s (composer: %s after %d Enter), but %s's own record has not shown it within %v", t.Endpoint.Target, res.Verdict, res.Enters, t.RecordedHarness, s.Tunables.Send.RecordWait).
		Hint("do not resend it before this says it never arrived: fm-control wait %s --for submitted --message-id %s", t.ID, d.messageID), "unrecorded")
}

// dialogWatch watches the screen, for a slash command to a harness with
// screen signatures, for a dialog the command opened, and names it once
// one is drawn. Any other text gets no watch (nil): a dialog it meets is the
// agent's (a permission prompt of the turn it started), not its answer.
func dialogWatch(ctx context.Context, t *task.Target, text string, sig *harness.ScreenSig) func() string {
	if sig == nil || !deliver.IsSlashCommand(text) {
		return nil
	}
	return func() string {
		st, err := deliver.ReadComposer(ctx, t.Backend, t.Endpoint, *sig)
		if err != nil {
			return ""
		}
		return st.Dialog
	}
}

// delivery is one text send, from its baseline to its verdict.
type delivery struct {
	t         *task.Target
	text      string
	at        time.Time
	messageID string
	watch     *deliver.RecordWatch
	emptied   *emptied // what was cleared from the composer before typing
	released  string   // what the agent's queue held, idle, until fmctl submitted it
}

// facts adds what every unconfirmed send reports.
func (d delivery) facts(e *fault.Error, submit string) *fault.Error {
	e = e.With("id", d.t.ID, "backend", d.t.BackendName, "endpoint", d.t.Endpoint.Target, "submit", submit, "message", d.messageID)
	if d.released != "" {
		e = e.With("released", d.released)
	}
	return d.emptiedFacts(e)
}

// emptiedFacts adds what was cleared from the composer before typing: it
// is gone whatever became of the message, and a discarded draft is named
// on a hint line too, since the text form prints no facts.
func (d delivery) emptiedFacts(e *fault.Error) *fault.Error {
	switch {
	case d.emptied == nil:
		return e
	case d.emptied.draft:
		return e.With("discarded", d.emptied.text).Hint("the draft %q was discarded from the composer before the message was typed", deliver.Clip(d.emptied.text, draftLineRunes))
	}
	return e.With("cleared", d.emptied.text)
}

// ledger keeps a send whose record fmctl reads, so wait --for submitted
// can find an unconfirmed one later and read --record names each message
// it sent by its id; where the record cannot be read there is nothing to
// find.
func (d delivery) ledger(verdict string) {
	if d.watch == nil {
		return
	}
	// Failing to keep it loses only the later wait, which then says the
	// message id is unknown; the send itself stands.
	_ = d.t.Store.AddSend(d.t.ID, state.Send{MessageID: d.messageID, At: d.at.Unix(), Digest: d.watch.Digest,
		Before: d.watch.Before, Harness: d.t.RecordedHarness, Verdict: verdict, Gen: d.t.Task.Record.SpawnGen(),
		Length: d.watch.Length, LogBefore: d.watch.LogBefore})
}

// refuseHeld refuses a message while the composer provably holds other
// input (an unconfirmed /exit, a half-typed line): typed now, the message
// would be glued onto it and submitted as one. A screen that cannot be read,
// or that proves nothing, is no refusal; the submit's own checks follow.
func refuseHeld(ctx context.Context, t *task.Target) error {
	screen, err := t.Backend.Capture(ctx, t.Endpoint)
	if err != nil {
		return nil
	}
	held := deliver.HeldInput(screen)
	if held == "" {
		return nil
	}
	if r := []rune(held); len(r) > 40 {
		held = string(r[:40]) + "..."
	}
	return fault.Failed("task %s's composer already holds %q before the cursor, so nothing was sent", t.ID, held).Coded(fault.EComposerHeld).
		Hint("the message would be glued onto leftover input, or typed into a dialog drawn over the composer").
		With("id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target, "held", held).
		Hint("look at the pane and clear that input (or submit it deliberately), then send again")
}
