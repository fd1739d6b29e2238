package records

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Transcript is a Reader that can also show the whole conversation its
// record holds, in one shape for every harness: `fm-control read --record`
// prints it. A reader adds it with one method.
type Transcript interface {
	// Entries lists the conversation oldest first. Its user entries are
	// exactly UserMessages, in the same order, so a count of copies of one
	// message (fm-send's baseline) means the same in both.
	Entries() ([]Entry, error)
}

// EntryKind is what one entry of a conversation is.
type EntryKind string

const (
	EntryUser       EntryKind = "user"        // a message the agent received
	EntryReply      EntryKind = "reply"       // the model's text
	EntryToolCall   EntryKind = "tool-call"   // a tool the model asked to run, with its input
	EntryToolResult EntryKind = "tool-result" // what the tool gave back, cut short
	EntryTurnEnd    EntryKind = "turn-end"    // the record marks the turn over
)

// Outcome is how a turn ended, where the record says it.
type Outcome string

const (
	Completed Outcome = "completed"
	Failed    Outcome = "failed" // the model's call failed for good
	Cancelled Outcome = "cancelled"
)

// Entry is one step of the conversation as the agent recorded it.
type Entry struct {
	Kind EntryKind
	Time time.Time // zero where the record keeps no time for it
	Text string
	Tool string  // the tool's name, for tool entries
	End  Outcome // for a turn end; "" where the record does not say how it ended
	Cut  int     // bytes of Text left out (tool input and output are cut short)
}

// userTexts is the text of the user entries: UserMessages, for a reader
// that reads both from one pass over its record.
func userTexts(entries []Entry, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Kind == EntryUser {
			out = append(out, e.Text)
		}
	}
	return out, nil
}

// maxToolText is how much of a tool's input or output an entry keeps: the
// conversation is what the view is for, and one command's output can be
// megabytes.
const maxToolText = 400

// toolEntry is a tool call or result with its text cut to maxToolText
// bytes (on a rune boundary), the cut marked in the text and counted.
func toolEntry(kind EntryKind, at time.Time, tool, text string) Entry {
	e := Entry{Kind: kind, Time: at, Tool: tool, Text: text}
	if len(text) <= maxToolText {
		return e
	}
	n := maxToolText
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	e.Cut = len(text) - n
	e.Text = fmt.Sprintf("%s… [%d more bytes]", text[:n], e.Cut)
	return e
}

// toolText is a tool's input or output as text: a JSON string as it
// stands, anything else as compact JSON.
func toolText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// stamp reads a record's RFC 3339 time; none or an unreadable one is zero.
func stamp(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// millis reads a record's Unix time in milliseconds; 0 is zero.
func millis(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
