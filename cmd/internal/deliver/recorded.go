package deliver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/harness/records"
	"fmctl/state"
)

// Proof is what the agent's own record says of one sent message.
type Proof string

const (
	Recorded   Proof = "recorded"   // one more exact copy of the message than before the send
	Duplicated Proof = "duplicated" // more than one more: the message reached the agent twice
	Unrecorded Proof = "unrecorded" // the record was read and does not hold it (yet)
	Unreadable Proof = "unreadable" // the record could not be read
	// Enqueued: not recorded as sent, but the record shows the agent took
	// it into its queue behind the running turn (records.Enqueuer, or a
	// queued submission in records.SubmitLogger's log).
	Enqueued Proof = "enqueued"
	// Logged: the text is not in the record yet, but the agent's log says
	// it took one more prompt of exactly this length since the send, and
	// started a turn with it (records.SubmitLogger: cline, whose record
	// gets the text only when that turn ends).
	Logged Proof = "logged"
)

// Taken: the agent took the message as sent, by its record or its log.
func (p Proof) Taken() bool { return p == Recorded || p == Logged }

// Held: not taken as sent yet, though it may be (unrecorded so far, or
// waiting in the agent's queue, which its record or log shows).
func (p Proof) Held() bool { return p == Unrecorded || p == Enqueued }

// Source names where a submit this proof confirms was read: the record
// holding the text, or the agent's log of a prompt of its length taken.
func (p Proof) Source() string {
	if p == Logged {
		return "log"
	}
	return "record"
}

// RecordWatch watches an agent's own record for one message: the count of
// exact copies before the send is the baseline, so an identical message
// sent earlier proves nothing about this one.
type RecordWatch struct {
	Reader records.Reader
	Digest string // MessageDigest of the message as sent
	// Text is the message as recorded (trimmed), when the watcher has it:
	// compared as it stands, where a watcher holding only the ledger's
	// digest hashes every recorded message on every poll.
	Text   string
	Before int // exact copies recorded before the send
	// Queue reads what the agent took into its queue, where its record
	// says (nil elsewhere); QueuedBefore is its count of exact copies
	// before the send.
	Queue        records.Enqueuer
	QueuedBefore int
	// Log reads the prompts the agent logs by length as it takes them
	// (nil elsewhere); LogBefore is its tally for this message's length
	// before the send.
	Log       records.SubmitLogger
	Length    int
	LogBefore state.LogTally
	// LogQueued: the agent took the message into its queue (the ledger's
	// word), so only that queued prompt's fate proves it, never a new
	// prompt of its length logged since.
	LogQueued bool
	// LogLines is how many prompts of any length the log held before the
	// send, and LogLive whether the live session had logged any
	// (NothingTaken).
	LogLines int
	LogLive  bool
}

// MessageDigest identifies a message as an agent records it: agents keep
// the text as submitted, but may drop the trailing blanks a composer trims.
func MessageDigest(text string) string {
	sum := sha256.Sum256([]byte(recordedForm(text)))
	return hex.EncodeToString(sum[:])
}

func recordedForm(text string) string { return strings.TrimRight(text, " \t\r\n") }

// StartWatch reads the baseline before the message is typed.
func StartWatch(r records.Reader, text string) (RecordWatch, error) {
	w := RecordWatch{Reader: r, Digest: MessageDigest(text), Text: recordedForm(text)}
	if q, ok := r.(records.Enqueuer); ok {
		w.Queue = q
	}
	if l, ok := r.(records.SubmitLogger); ok {
		w.Log, w.Length = l, utf16Len(w.Text)
	}
	sh, err := w.read()
	if err != nil {
		w.Queue, w.Log = nil, nil
		return w, err
	}
	w.Before = w.count(sh)
	w.QueuedBefore = w.countIn(sh.Enqueued)
	w.LogBefore, _ = tallyLog(sh.Submissions, w.Length)
	w.LogLines = len(sh.Submissions)
	w.LogLive = slices.ContainsFunc(sh.Submissions, func(s records.Submission) bool { return s.Live })
	return w, nil
}

// NothingTaken reads the record now and reports whether it proves the
// agent took nothing since the baseline: its log, which the agent writes
// at once as it takes a prompt (cline's session.input_sent), holds no
// prompt more of any length or delivery, and its record no copy more of
// the message. Only a log the live session writes proves it: a session
// cline runs in its hub logs no prompt. Without such a log, or a record
// it could read, nothing is proved.
func (w RecordWatch) NothingTaken() bool {
	if w.Log == nil || !w.LogLive {
		return false
	}
	sh, err := w.read()
	return err == nil && len(sh.Submissions) == w.LogLines && w.count(sh) == w.Before
}

// read reads the record once for what the watch counts: in one pass where
// the reader can (records.SheetReader), else list by list.
func (w RecordWatch) read() (records.Sheet, error) {
	if s, ok := w.Reader.(records.SheetReader); ok {
		return s.Sheet()
	}
	var sh records.Sheet
	var err error
	if sh.Messages, err = w.Reader.UserMessages(); err != nil {
		return sh, err
	}
	if c, ok := w.Reader.(records.CommandRecorder); ok && w.mayBeCommand() {
		if sh.Commands, err = c.Commands(); err != nil {
			return sh, err
		}
	}
	if w.Queue != nil {
		if sh.Enqueued, err = w.Queue.EnqueuedMessages(); err != nil {
			return sh, err
		}
	}
	if w.Log != nil {
		sh.Submissions, err = w.Log.Submissions()
	}
	return sh, err
}

// SentWatch is the watch for a message the send ledger kept: its digest,
// its copies before, and what the agent's log held of its length.
func SentWatch(r records.Reader, s state.Send) RecordWatch {
	w := RecordWatch{Reader: r, Digest: s.Digest, Before: s.Before}
	if l, ok := r.(records.SubmitLogger); ok && s.Length > 0 {
		w.Log, w.Length, w.LogBefore = l, s.Length, s.LogBefore
		w.LogQueued = s.Verdict == string(Queued) || s.Verdict == state.VerdictUntaken
	}
	return w
}

// utf16Len is text's length as JavaScript counts it, which is how cline
// logs a prompt's.
func utf16Len(text string) int {
	n := 0
	for _, r := range text {
		n++
		if r >= 0x10000 {
			n++ // a surrogate pair
		}
	}
	return n
}

// tallyLog counts the logged submissions of prompts of length n, and
// gives the fates of the queued ones in order. A queued submission is
// logged again when it is sent, which is its fate (the reader's Sent or
// Dropped) and no new prompt. Only a prompt whose run the log shows
// started counts as taken: cline logs a prompt before it starts its run,
// and drops one whose run cannot.
func tallyLog(subs []records.Submission, n int) (state.LogTally, []records.Submission) {
	var t state.LogTally
	var queued []records.Submission
	for _, s := range subs {
		switch {
		case s.Length != n, s.Dequeued:
		case s.Queued:
			t.Queued++
			queued = append(queued, s)
		case s.Started:
			t.Fresh++
		}
	}
	return t, queued
}

// logProof reads the agent's log as read in this poll: a new prompt of
// this length that started a turn is Logged, and so is this one once the
// queue sent it (the queued prompt of its length next after those before
// the send); one still queued is Enqueued, one the queue let go proves
// nothing.
func (w RecordWatch) logProof(subs []records.Submission) Proof {
	t, queued := tallyLog(subs, w.Length)
	b := w.LogBefore
	switch {
	case t.Fresh > b.Fresh && !w.LogQueued:
		return Logged
	case len(queued) > b.Queued && queued[b.Queued].Sent:
		return Logged
	case len(queued) > b.Queued && !queued[b.Queued].Dropped:
		return Enqueued
	}
	return Unrecorded
}

func (w RecordWatch) holds(m string) bool {
	if w.is(m) {
		return true
	}
	// gemini submits the texts it queued behind a turn as one message,
	// joined by blank lines: the text is then a run of its parts.
	parts := strings.Split(recordedForm(m), queueJoin)
	for i := range parts {
		for j := i + 1; j <= len(parts) && len(parts) > 1; j++ {
			if j-i < len(parts) && w.is(strings.Join(parts[i:j], queueJoin)) {
				return true
			}
		}
	}
	return false
}

// queueJoin joins the texts gemini took into its queue when it submits
// them as one message (its useMessageQueue).
const queueJoin = "\n\n"

func (w RecordWatch) is(m string) bool {
	if w.Text != "" {
		return recordedForm(m) == w.Text
	}
	return MessageDigest(m) == w.Digest
}

// count is the copies of this message the record holds: its user
// messages, and the slash commands the agent took itself where this message
// may be one (claude's /help).
func (w RecordWatch) count(sh records.Sheet) int {
	n := w.countIn(sh.Messages)
	if w.mayBeCommand() {
		n += w.countIn(sh.Commands)
	}
	return n
}

// mayBeCommand: a watch holding only the digest (wait --for submitted)
// cannot tell, and a command never matches a digest of text that is not
// one, so it always counts them.
func (w RecordWatch) mayBeCommand() bool { return w.Text == "" || IsSlashCommand(w.Text) }

// IsSlashCommand reports whether text is one line that begins with "/":
// what a CLI runs as its own command rather than sends to the model.
func IsSlashCommand(text string) bool {
	t := recordedForm(text)
	return strings.HasPrefix(t, "/") && !strings.Contains(t, "\n")
}

// countIn counts the messages of msgs that hold this one.
func (w RecordWatch) countIn(msgs []string) int {
	n := 0
	for _, m := range msgs {
		if w.holds(m) {
			n++
		}
	}
	return n
}

// Newest is the newest message the record holds this one in: the message
// itself, or the one gemini joined its queue into.
func (w RecordWatch) Newest() (string, bool) {
	msgs, err := w.Reader.UserMessages()
	if err != nil {
		return "", false
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if w.holds(msgs[i]) {
			return msgs[i], true
		}
	}
	return "", false
}

// Joined reports whether the newest message holding this one is not it
// alone: the agent submitted it joined to other texts it had queued.
func (w RecordWatch) Joined() bool {
	m, ok := w.Newest()
	return ok && !w.is(m)
}

// Check reads the record once.
func (w RecordWatch) Check() Proof {
	sh, err := w.read()
	if err != nil {
		return Unreadable
	}
	switch n := w.count(sh); {
	case n == w.Before+1:
		return Recorded
	case n > w.Before+1:
		return Duplicated
	case w.Queue != nil && w.countIn(sh.Enqueued) > w.QueuedBefore:
		return Enqueued
	case w.Log != nil && w.Length > 0:
		return w.logProof(sh.Submissions)
	}
	return Unrecorded
}

// AwaitOr polls the record until it holds the message, or shows it taken
// into the agent's queue, or wait passes, or stop (when given) names why
// nothing more will reach the record for now, and returns that name: a
// slash command that opened a dialog, which claude records only when the
// dialog closes and cline never. Agents write their record as they take
// the message (claude, codex, opencode, gemini at submit; pi as its
// request starts; claude's queue as it takes a text during a turn), so
// the poll's cap (FM_SEND_RECORD_POLL) is how late after that the send
// can answer.
func (w RecordWatch) AwaitOr(ctx context.Context, wait, pollCap time.Duration, stop func() string) (proof Proof, stopped string) {
	deadline := time.Now().Add(wait)
	poll := backends.Backoff{Max: pollCap}
	for {
		proof = w.Check()
		if proof == Recorded || proof == Duplicated || proof == Enqueued || proof == Logged {
			return proof, ""
		}
		if stop != nil {
			if why := stop(); why != "" {
				return proof, why
			}
		}
		if !pollUntil(ctx, &poll, deadline) {
			return proof, ""
		}
	}
}
