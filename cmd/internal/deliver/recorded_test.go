package deliver

import (
	"slices"
	"testing"

	"fmctl/harness/records"
	"fmctl/state"
)

// recordOf is a record holding the given user messages.
type recordOf []string

func (r recordOf) UserMessages() ([]string, error) { return r, nil }
func (r recordOf) TurnRunning() (bool, error)      { return false, nil }

// A watch that has the text and one that has only the ledger's digest (wait
// --for submitted) must prove the same things from the same record.
func TestRecordWatchByTextAndByDigestAgree(t *testing.T) {
	const msg = "fix the build\n"
	for _, tc := range []struct {
		name   string
		before recordOf
		after  recordOf
		want   Proof
		joined bool // held only inside a message joined to others
	}{
		{"taken once", recordOf{"hi"}, recordOf{"hi", "fix the build"}, Recorded, false},
		{"composer trimmed the blanks", nil, recordOf{"fix the build  \n"}, Recorded, false},
		{"an earlier copy proves nothing", recordOf{"fix the build"}, recordOf{"fix the build"}, Unrecorded, false},
		{"taken twice", nil, recordOf{"fix the build", "fix the build"}, Duplicated, false},
		{"a longer message is not it", nil, recordOf{"fix the build now"}, Unrecorded, false},
		// gemini's queue, submitted as one message joined by blank lines
		{"first of a flushed queue", nil, recordOf{"fix the build\n\nthen the docs"}, Recorded, true},
		{"last of a flushed queue", nil, recordOf{"lint it\n\nfix the build"}, Recorded, true},
		{"middle of a flushed queue", nil, recordOf{"a\n\nfix the build\n\nb"}, Recorded, true},
		{"a part's prefix is not it", nil, recordOf{"fix the build now\n\nb"}, Unrecorded, false},
		{"one line of a part is not it", nil, recordOf{"fix the build\nand more\n\nb"}, Unrecorded, false},
	} {
		byText := checkByTextAndDigest(t, tc.name, msg, tc.before, tc.after, tc.want)
		// fm-send confirms only a message taken as itself.
		if got := byText.Joined(); got != tc.joined {
			t.Errorf("%s: Joined = %v, want %v", tc.name, got, tc.joined)
		}
	}
}

// A message with blank lines of its own is found whole, in or out of a
// flushed queue, and never by one of its paragraphs.
func TestRecordWatchFindsAMessageWithBlankLinesWhole(t *testing.T) {
	const msg = "step one\n\nstep two"
	for _, tc := range []struct {
		rec  recordOf
		want Proof
	}{
		{recordOf{"step one\n\nstep two"}, Recorded},
		{recordOf{"queued first\n\nstep one\n\nstep two"}, Recorded},
		{recordOf{"step one"}, Unrecorded},
	} {
		w, _ := StartWatch(recordOf{}, msg)
		w.Reader = tc.rec
		if got := w.Check(); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.rec, got, tc.want)
		}
	}
}

// queueOf is a record holding user messages and the texts the agent took
// into its queue (claude's queue-operation enqueue records).
type queueOf struct {
	recordOf
	queued []string
}

func (r queueOf) EnqueuedMessages() ([]string, error) { return r.queued, nil }

// A text the record shows taken into the agent's queue, and not yet sent,
// is enqueued; once sent it is recorded; an earlier enqueue of the same
// text proves nothing of this one.
func TestRecordWatchSeesTheAgentsQueue(t *testing.T) {
	const msg = "run the linter"
	for _, tc := range []struct {
		name          string
		before, after queueOf
		want          Proof
	}{
		{"taken into the queue", queueOf{}, queueOf{queued: []string{msg}}, Enqueued},
		{"sent since", queueOf{}, queueOf{recordOf{msg}, []string{msg}}, Recorded},
		{"an earlier enqueue proves nothing", queueOf{queued: []string{msg}}, queueOf{queued: []string{msg}}, Unrecorded},
		{"another text queued", queueOf{}, queueOf{queued: []string{"run the tests"}}, Unrecorded},
	} {
		w, err := StartWatch(tc.before, msg)
		if err != nil || w.Queue == nil {
			t.Fatalf("%s: StartWatch = %+v, %v: want a watch of the queue", tc.name, w, err)
		}
		w.Reader, w.Queue = tc.after, tc.after
		if got := w.Check(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// A record without a queue of its own never says enqueued.
	if w, _ := StartWatch(recordOf{}, msg); w.Queue != nil {
		t.Error("a record that keeps no queue is watched for one")
	}
}

// logOf is a record whose agent logs each prompt it takes by length
// (cline's session.input_sent): i immediate, q queued, of the message's
// length unless named otherwise.
type logOf struct {
	recordOf
	subs []records.Submission
}

func (r logOf) Submissions() ([]records.Submission, error) { return r.subs, nil }

// subs is the log as cline's reader gives it, one submission of length n
// a letter: q queued; i immediate, its run started; d immediate, no run
// of its own started; o immediate of another length, its run started.
// An immediate of length n sends the oldest queued one still waiting (its
// fate that immediate's run), and o lets the queue go, as cline's single
// queue does.
func subs(n int, kinds string) []records.Submission {
	var out []records.Submission
	var waiting []int
	for _, k := range kinds {
		s := records.Submission{Length: n, Queued: k == 'q', Started: k == 'i' || k == 'o'}
		switch {
		case k == 'o':
			s.Length = n + 1
			for _, i := range waiting {
				out[i].Dropped = true
			}
			waiting = nil
		case k == 'q':
			waiting = append(waiting, len(out))
		case len(waiting) > 0:
			s.Dequeued = true
			out[waiting[0]].Sent, out[waiting[0]].Dropped = s.Started, !s.Started
			waiting = waiting[1:]
		}
		out = append(out, s)
	}
	return out
}

// A new prompt of the message's length logged since the send is logged
// (confirmed by the log); one logged queued is enqueued until it is sent
// after every one of its length queued before it; another length, or an
// earlier queued prompt of the same length sent, proves nothing of it.
func TestRecordWatchReadsTheAgentsSubmitLog(t *testing.T) {
	const msg = "run the linter é" // 16 runes, 16 UTF-16 units
	n := 16
	for _, tc := range []struct {
		name          string
		before, after []records.Submission
		want          Proof
	}{
		{"taken at once", nil, subs(n, "i"), Logged},
		{"another length", nil, subs(n+1, "i"), Unrecorded},
		{"queued", subs(n, "i"), subs(n, "iq"), Enqueued},
		{"queued, then sent", subs(n, "i"), subs(n, "iqi"), Logged},
		{"an earlier queued one sent", subs(n, "q"), subs(n, "qqi"), Enqueued},
		{"both sent", subs(n, "q"), subs(n, "qqii"), Logged},
		{"an earlier one sent, nothing since", subs(n, "q"), subs(n, "qi"), Unrecorded},
		// d: logged immediate, but no run of its own started (dropped)
		{"taken, its run never started", nil, subs(n, "d"), Unrecorded},
		{"queued, its sending never ran", subs(n, "i"), subs(n, "iqd"), Unrecorded},
		{"queued, the queue let go", subs(n, "i"), subs(n, "iqo"), Unrecorded},
		// The tier's outage lab: a later text of its length queued and
		// sent is no proof of one the queue let go before it.
		{"let go, a later one of its length sent", subs(n, "i"), subs(n, "iqoqi"), Unrecorded},
		{"let go, then this one sent", subs(n, "iqo"), subs(n, "iqoqi"), Logged},
	} {
		w, err := StartWatch(logOf{subs: tc.before}, msg)
		if err != nil || w.Log == nil || w.Length != n {
			t.Fatalf("%s: StartWatch = %+v, %v: want a watch of the log", tc.name, w, err)
		}
		w.Reader, w.Log = logOf{subs: tc.after}, logOf{subs: tc.after}
		if got := w.Check(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// A message the ledger keeps as queued is proved by its queued
	// prompt's fate alone: a new prompt of its length after the queue let
	// it go is another message.
	for _, verdict := range []string{string(Queued), state.VerdictUntaken} {
		w := SentWatch(logOf{subs: subs(n, "qoi")}, state.Send{Digest: MessageDigest(msg), Length: n, Verdict: verdict})
		if got := w.Check(); got != Unrecorded {
			t.Errorf("%s, let go, a new prompt of its length: %s, want %s", verdict, got, Unrecorded)
		}
	}
	w := SentWatch(logOf{subs: subs(n, "qoi")}, state.Send{Digest: MessageDigest(msg), Length: n, Verdict: "unrecorded"})
	if got := w.Check(); got != Logged {
		t.Errorf("unrecorded, then a new prompt of its length: %s, want %s", got, Logged)
	}
	// The text itself in the record wins over the log.
	w, _ = StartWatch(logOf{}, msg)
	w.Reader = logOf{recordOf{msg}, subs(n, "i")}
	if got := w.Check(); got != Recorded {
		t.Errorf("recorded text: %s", got)
	}
	// A pair of UTF-16 units counts as two, as cline counts.
	if got := utf16Len("a🙂"); got != 3 {
		t.Errorf("utf16Len = %d, want 3", got)
	}
}

// live marks every submission as the live session's.
func live(subs []records.Submission) []records.Submission {
	out := slices.Clone(subs)
	for i := range out {
		out[i].Live = true
	}
	return out
}

// The log proves nothing taken only where the live session writes it, and
// only while it holds no prompt more of any length, nor the record the
// message.
func TestNothingTakenNeedsTheLiveSessionsLog(t *testing.T) {
	const msg = "message 2 of round 17 eeaee7"
	n := utf16Len(msg)
	for _, tc := range []struct {
		name          string
		before, after logOf
		want          bool
	}{
		{"nothing logged since", logOf{subs: live(subs(n, "i"))}, logOf{subs: live(subs(n, "i"))}, true},
		{"a prompt of its length since", logOf{subs: live(subs(n, "i"))}, logOf{subs: live(subs(n, "ii"))}, false},
		{"a prompt of another length since", logOf{subs: live(subs(n, "i"))}, logOf{subs: live(subs(n, "io"))}, false},
		{"queued since", logOf{subs: live(subs(n, "i"))}, logOf{subs: live(subs(n, "iq"))}, false},
		{"the message in the record", logOf{subs: live(subs(n, "i"))}, logOf{recordOf{msg}, live(subs(n, "i"))}, false},
		// A session cline runs in its hub logs no prompt: its log is
		// silent whatever it takes.
		{"only an older session logged", logOf{subs: subs(n, "i")}, logOf{subs: subs(n, "i")}, false},
		{"nothing logged at all", logOf{}, logOf{}, false},
	} {
		w, err := StartWatch(tc.before, msg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		w.Reader, w.Log = tc.after, tc.after
		if got := w.NothingTaken(); got != tc.want {
			t.Errorf("%s: NothingTaken = %v, want %v", tc.name, got, tc.want)
		}
	}
	if w, _ := StartWatch(recordOf{}, msg); w.NothingTaken() {
		t.Error("a record with no log proved nothing taken")
	}
}

// commandsOf is a record that keeps the slash commands the agent took
// apart from its user messages (claude's).
type commandsOf struct {
	recordOf
	commands []string
}

func (r commandsOf) Commands() ([]string, error) { return r.commands, nil }

// A slash command the agent took is proved by its record's commands, by
// the text and by the ledger's digest alike; a text that is no command is
// never proved by one.
func TestRecordWatchCountsTheAgentsCommands(t *testing.T) {
	for _, tc := range []struct {
		name, msg     string
		before, after commandsOf
		want          Proof
	}{
		{"the command ran", "/help", commandsOf{}, commandsOf{commands: []string{"/help"}}, Recorded},
		{"an earlier run proves nothing", "/help", commandsOf{commands: []string{"/help"}}, commandsOf{commands: []string{"/help"}}, Unrecorded},
		{"ran twice", "/help", commandsOf{}, commandsOf{commands: []string{"/help", "/help"}}, Duplicated},
		{"a message is not the command of its name", "help", commandsOf{}, commandsOf{commands: []string{"/help"}}, Unrecorded},
	} {
		checkByTextAndDigest(t, tc.name, tc.msg, tc.before, tc.after, tc.want)
	}
}

// checkByTextAndDigest watches msg from the record before, as fm-send (by
// its text) and wait --for submitted (by the ledger's digest) do, and
// checks both read the record after as want; it returns the watch by text.
func checkByTextAndDigest(t *testing.T, name, msg string, before, after records.Reader, want Proof) RecordWatch {
	t.Helper()
	byText, err := StartWatch(before, msg)
	if err != nil {
		t.Fatal(err)
	}
	byDigest := RecordWatch{Digest: byText.Digest, Before: byText.Before}
	byText.Reader, byDigest.Reader = after, after
	if got := byText.Check(); got != want {
		t.Errorf("%s: by text %s, want %s", name, got, want)
	}
	if got := byDigest.Check(); got != want {
		t.Errorf("%s: by digest %s, want %s", name, got, want)
	}
	return byText
}

// sheetOf is a record read in one pass: its lists must never be read one
// by one.
type sheetOf struct {
	t     *testing.T
	sheet records.Sheet
	reads *int
}

func (r sheetOf) Sheet() (records.Sheet, error) { *r.reads++; return r.sheet, nil }
func (r sheetOf) UserMessages() ([]string, error) {
	r.t.Error("UserMessages read apart from the sheet")
	return r.sheet.Messages, nil
}
func (r sheetOf) TurnRunning() (bool, error) { return false, nil }
func (r sheetOf) Commands() ([]string, error) {
	r.t.Error("Commands read apart from the sheet")
	return r.sheet.Commands, nil
}
func (r sheetOf) EnqueuedMessages() ([]string, error) {
	r.t.Error("EnqueuedMessages read apart from the sheet")
	return r.sheet.Enqueued, nil
}

// A reader with a sheet (claude) is read once per check, for messages,
// commands and queue together, and counts as before.
func TestRecordWatchReadsASheetOnce(t *testing.T) {
	reads := 0
	w, err := StartWatch(sheetOf{t, records.Sheet{Enqueued: []string{"/help"}}, &reads}, "/help")
	if err != nil || reads != 1 {
		t.Fatalf("StartWatch: %v, %d reads", err, reads)
	}
	for _, tc := range []struct {
		sheet records.Sheet
		want  Proof
	}{
		{records.Sheet{Enqueued: []string{"/help"}}, Unrecorded},
		{records.Sheet{Enqueued: []string{"/help", "/help"}}, Enqueued},
		{records.Sheet{Commands: []string{"/help"}}, Recorded},
		{records.Sheet{Messages: []string{"/help"}, Commands: []string{"/help"}}, Duplicated},
	} {
		reads = 0
		w.Reader = sheetOf{t, tc.sheet, &reads}
		if got := w.Check(); got != tc.want || reads != 1 {
			t.Errorf("%+v: %s in %d reads, want %s in one", tc.sheet, got, reads, tc.want)
		}
	}
}
