package deliver

import (
	"testing"

	"fmctl/harness/records"
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
