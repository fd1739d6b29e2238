package control

import (
	"context"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/cmd/internal/termtext"
	"fmctl/harness/records"
)

// ReadRecord prints task id's conversation as its agent recorded it (its
// transcript, rollout, database or session file), the last lines entries
// of it, in one shape for every harness: user messages with the id fm-send
// gave each it sent, replies, tool calls and their results cut short, and
// turn ends with their outcome. With follow it then prints each new entry
// as the record grows, until the agent is gone, the context ends (SIGINT,
// SIGTERM) or stdout is closed. Nothing is locked, written or typed: the
// record and the send ledger are only read.
func (c *Controller) ReadRecord(ctx context.Context, id string, lines int, follow bool) error {
	t, err := c.tasks().Open(id)
	if err != nil {
		return err
	}
	if !t.HasHarness || !records.Has(t.Harness.Name) {
		return fault.Failed("fmctl reads no record of task %s's harness '%s', so it cannot show its conversation", id, t.RecordedHarness).Coded(fault.ENoRecordReader).
			With("id", id).
			Hint("its pane shows what it drew: fm-control read %s", id)
	}
	// The state is read before the record, so the last round's record
	// holds everything the agent wrote before it was gone.
	obs := t.Backend.AgentState(ctx, t.Endpoint)
	entries, err := c.conversation(t, obs)
	if err != nil {
		return err
	}
	if len(entries) == 0 && !follow {
		return noRecord(t, "holds no conversation yet")
	}
	seen := len(entries)
	if err := c.printEntries(t, entries[max(0, seen-lines):]); err != nil || !follow {
		return nil // a closed pipe ends the reading, as it ends a follow
	}
	for {
		if obs.State == backends.StateDead || obs.State == backends.StateMissing {
			c.print.Notice("task %s's agent is no longer running at %s (state: %s); stopped following its record", id, t.Endpoint.Target, obs.State)
			return nil
		}
		if backends.Sleep(ctx, c.tun.Control.RecordPoll) != nil || cli.ReaderGone(c.print.Out) {
			return nil
		}
		obs = t.Backend.AgentState(ctx, t.Endpoint)
		entries, err := c.conversation(t, obs)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if len(entries) > seen {
			if c.printEntries(t, entries[seen:]) != nil {
				return nil
			}
		}
		// A record that shrank was rewritten (a session file replaced):
		// what follows is new from there on.
		seen = len(entries)
	}
}

// recordEntry is one entry with the id of the fm-send that sent it.
type recordEntry struct {
	records.Entry
	Message string
}

// conversation reads the agent's record once and names the messages
// fm-send sent.
func (c *Controller) conversation(t *task.Target, obs backends.Observation) ([]recordEntry, error) {
	r, ok := t.AgentRecord(obs)
	if !ok {
		return nil, noRecord(t, "cannot be located (no HOME or directory of its agent is known)")
	}
	tr, ok := r.(records.Transcript)
	if !ok {
		return nil, fault.Failed("fmctl reads task %s's %s record for its messages only, not its whole conversation", t.ID, t.RecordedHarness).Coded(fault.ENoRecordReader).
			With("id", t.ID).
			Hint("its pane shows what it drew: fm-control read %s", t.ID)
	}
	entries, err := tr.Entries()
	if err != nil {
		return nil, noRecord(t, "cannot be read: "+err.Error())
	}
	return c.withMessageIDs(t, entries), nil
}

func noRecord(t *task.Target, why string) error {
	return fault.Failed("task %s's %s record %s", t.ID, t.RecordedHarness, why).Coded(fault.ENoRecord).
		With("id", t.ID).
		Hint("--follow waits for it to appear; the pane shows what the agent drew: fm-control read %s", t.ID)
}

// withMessageIDs names each user entry fm-send sent with that send's id,
// from the task's send ledger: a send is the (before+1)th copy of its
// digest in the record, before being the copies the record held when it
// was sent. An entry no kept send accounts for has no id.
func (c *Controller) withMessageIDs(t *task.Target, entries []records.Entry) []recordEntry {
	// A ledger that cannot be read costs only the ids.
	sends, _ := t.Store.Sends(t.ID)
	ids := map[string]map[int]string{} // digest -> copy number -> message id
	for _, s := range sends {
		if s.Harness != t.RecordedHarness {
			continue // sent to another harness's agent, recorded elsewhere
		}
		if ids[s.Digest] == nil {
			ids[s.Digest] = map[int]string{}
		}
		ids[s.Digest][s.Before+1] = s.MessageID
	}
	copies := map[string]int{}
	out := make([]recordEntry, len(entries))
	for i, e := range entries {
		out[i].Entry = e
		if e.Kind != records.EntryUser || len(ids) == 0 {
			continue
		}
		d := deliver.MessageDigest(e.Text)
		copies[d]++
		out[i].Message = ids[d][copies[d]]
	}
	return out
}

func (c *Controller) printEntries(t *task.Target, entries []recordEntry) error {
	for _, e := range entries {
		if c.print.JSON {
			c.print.Outcome(entryOutcome(t, e))
			continue
		}
		if _, err := c.print.Out.Write([]byte(entryText(e) + "\n")); err != nil {
			return err
		}
	}
	if c.print.JSON {
		return c.print.Output.Err()
	}
	return nil
}

// recordTime is an entry's time as printed: UTC to the second in text
// (a transcript is read across days), to the millisecond in JSON.
const recordTime = "2006-01-02T15:04:05Z"

// entryText is one entry as text: its time (- where the record keeps
// none), its kind, the message id, tool or outcome it has, then its text
// with any terminal control sequence stripped, each further line indented.
func entryText(e recordEntry) string {
	at := "-"
	if !e.Time.IsZero() {
		at = e.Time.UTC().Format(recordTime)
	}
	head := at + " " + string(e.Kind)
	switch e.Kind {
	case records.EntryUser:
		if e.Message != "" {
			head += " " + e.Message
		}
	case records.EntryToolCall, records.EntryToolResult:
		head += " " + orDash(termtext.Strip(e.Tool))
	case records.EntryTurnEnd:
		head += " " + orDash(string(e.End))
	}
	text := strings.TrimRight(termtext.Strip(e.Text), "\n")
	if text == "" {
		return head
	}
	return head + ": " + strings.ReplaceAll(text, "\n", "\n    ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// entryOutcome is one entry as read --record --json prints it.
func entryOutcome(t *task.Target, e recordEntry) cli.Outcome {
	at := ""
	if !e.Time.IsZero() {
		at = e.Time.UTC().Format(time.RFC3339Nano)
	}
	out := cli.Outcome{Word: "entry", ID: t.ID}
	out.Add("harness", t.RecordedHarness).Add("kind", string(e.Kind)).
		Put(fault.OrNull("at", at, "-"), fault.OrNull("message", e.Message, "-"), fault.OrNull("tool", termtext.Strip(e.Tool), "-"), fault.OrNull("end", string(e.End), "-")).
		Add("text", termtext.Strip(e.Text)).Put(fault.Int("cut", e.Cut))
	return out
}
