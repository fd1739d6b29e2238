// Package records reads what a real agent CLI itself recorded: its
// transcript, rollout, database or log. The real-agent tier decides what was
// delivered from these, never from the screen: a message fmctl reports as
// submitted must be in the agent's own record exactly once.
package records

import (
	"context"
	"fmt"
	"time"
)

// Reader answers the two questions the real-agent tier asks of an agent's
// own record.
type Reader interface {
	// UserMessages lists the user messages the agent received, in order,
	// each exactly as the agent recorded it. Slash commands the agent ran
	// itself (not sent to the model) are not user messages.
	UserMessages() ([]string, error)
	// TurnRunning reports whether the agent's record shows a turn that has
	// started and not yet ended (finished, failed or cancelled).
	TurnRunning() (bool, error)
}

// CancelMarker is a Reader whose record marks a cancel by itself, so it can
// prove the cancel of a turn it never showed running: gemini records
// "Request cancelled." at the Escape, and a prompt cancelled while its
// BeforeAgent hooks ran is recorded only after that line, and never sent.
type CancelMarker interface {
	// CancelledSince reports whether the record marks a cancel at or after at.
	CancelledSince(at time.Time) (bool, error)
}

// SessionStatus is a Reader whose record keeps the session's state as the
// agent runs it, for a harness that wires no hooks: cline's <id>.json
// status.
type SessionStatus interface {
	// Activity is the newest session's state in the activity vocabulary
	// ("busy", "waiting", "idle"), or "" where it says none of them (the
	// session over, or none yet).
	Activity() (string, error)
}

// SubmitLogger is a Reader whose agent logs each prompt as it takes it,
// by its length alone, long before the prompt itself reaches its record:
// cline writes a prompt to messages.json only when its turn ends.
type SubmitLogger interface {
	// Submissions lists each prompt the agent took, in order.
	Submissions() ([]Submission, error)
}

// Submission is one prompt an agent logged taking.
type Submission struct {
	Length int  // in UTF-16 code units, as the agent (JavaScript) counts
	Queued bool // held behind the running turn; logged again when sent
	// Started: the log shows the run this prompt started, which it could
	// not have dropped (an immediate prompt only).
	Started bool
	// Dequeued: an immediate prompt that is a queued one taken off the
	// agent's queue (logged again as it is sent), not a new prompt.
	Dequeued bool
	// Sent and Dropped are a queued prompt's fate, where the log tells
	// it: taken off the queue into a run that started, or let go (the
	// queue moved past it, or its run never started). Neither: still
	// queued, or the log cannot tell.
	Sent, Dropped bool
	// Live: logged by the worktree's newest session, the one a live
	// agent runs. A session the TUI runs in cline's hub logs none, so a
	// session with prompts here logs each one as it takes it.
	Live      bool
	Time      time.Time
	ambiguous bool // a run's start the log cannot give to one prompt
	dequeueOf int  // Dequeued: 1 + the index of the queued prompt it sends
}

// CommandRecorder is a Reader whose record keeps the slash commands the
// agent ran (or refused) itself, which are no user messages: claude writes
// "/help" as a local_command record and "/nosuchcmd" as an informational
// "Unknown command" one.
type CommandRecorder interface {
	// Commands lists each slash command the agent took, in order, as typed
	// ("/name" and its arguments, if any).
	Commands() ([]string, error)
}

// Enqueuer is a Reader whose record says when the agent took a text into
// its queue behind a running turn, before it sends it: claude writes a
// queue-operation "enqueue" with the text as it takes it, and the user
// record only when the text is sent.
type Enqueuer interface {
	// EnqueuedMessages lists every text the agent took into its queue, in
	// order, each time it did, whether sent since or not.
	EnqueuedMessages() ([]string, error)
}

// Sheet is what a record watch reads of a record on every poll: the user
// messages, the slash commands the agent ran itself, and the texts it took
// into its queue (the last two empty where the record keeps none).
type Sheet struct {
	Messages, Commands, Enqueued []string
	// Submissions is a SubmitLogger's log, read in the same pass.
	Submissions []Submission
}

// SheetReader is a Reader that reads its Sheet in one pass over its
// record, where the lists would each parse the same files: claude's
// transcript, and cline's sessions with its log, polled every 200 ms while
// fm-send waits.
type SheetReader interface {
	Sheet() (Sheet, error)
}

// markedSince reports whether any of recs is a cancel mark stamped at or
// after at; mark gives a record's stamp (RFC 3339) and whether it is one.
// The CLIs' stamps are whole milliseconds, so at is cut to the millisecond.
func markedSince[T any](recs []T, err error, at time.Time, mark func(T) (string, bool)) (bool, error) {
	if err != nil {
		return false, err
	}
	at = at.Truncate(time.Millisecond)
	for i := len(recs) - 1; i >= 0; i-- {
		s, ok := mark(recs[i])
		if !ok {
			continue
		}
		if stamp, err := time.Parse(time.RFC3339Nano, s); err == nil && !stamp.Before(at) {
			return true, nil
		}
	}
	return false, nil
}

// Where locates one agent's records.
type Where struct {
	Home     string // the private HOME the agent ran with
	Worktree string // the directory the agent ran in (absolute, symlinks resolved)
	// Since is when the live agent was launched, when known: a session a
	// reader finds begun before it is an earlier agent's, and a turn that
	// agent left unfinished (it was killed mid-turn) runs nowhere now.
	Since time.Time
	// Query runs one read-only SQL query against a SQLite database and
	// returns its rows as a JSON array (sqlite3 -json); opencode keeps its
	// record in one. Reading it is an external call, which the caller
	// bounds and owns.
	Query func(ctx context.Context, db, query string) ([]byte, error)
}

// For returns the reader for harness name.
func For(name string, w Where) (Reader, error) {
	open, ok := readers[name]
	if !ok {
		return nil, fmt.Errorf("no record reader for harness %q", name)
	}
	return open(w), nil
}

// readers is filled by one file per harness (claude.go, codex.go, ...).
var readers = map[string]func(Where) Reader{}

// Has reports whether fmctl can read harness name's own record.
func Has(name string) bool {
	_, ok := readers[name]
	return ok
}
