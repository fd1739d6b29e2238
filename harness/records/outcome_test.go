package records

import (
	"testing"
	"time"
)

func TestLastTurnIsTheEndAfterTheNewestUserMessage(t *testing.T) {
	u := Entry{Kind: EntryUser, Text: "go"}
	reply := Entry{Kind: EntryReply, Text: "done"}
	end := func(o Outcome) Entry { return Entry{Kind: EntryTurnEnd, End: o} }
	for _, tc := range []struct {
		name         string
		entries      []Entry
		want         Outcome
		ended, found bool
	}{
		{"no message yet", nil, "", false, false},
		{"completed", []Entry{u, reply, end(Completed)}, Completed, true, true},
		{"the newest turn runs", []Entry{u, reply, end(Completed), u, reply}, "", false, true},
		{"cancelled after a completed one", []Entry{u, end(Completed), u, end(Cancelled)}, Cancelled, true, true},
		{"failed", []Entry{u, end(Failed)}, Failed, true, true},
		{"an end the record does not name", []Entry{u, end("")}, "", true, true},
	} {
		got, ended, found := LastTurn(tc.entries, time.Time{})
		if got.End != tc.want || ended != tc.ended || found != tc.found {
			t.Errorf("%s: LastTurn = %q ended=%v found=%v, want %q %v %v", tc.name, got.End, ended, found, tc.want, tc.ended, tc.found)
		}
	}
}

func TestLastTurnOfAnEarlierAgentRunsNowhere(t *testing.T) {
	launched := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	before, after := launched.Add(-time.Minute), launched.Add(time.Second)
	u := func(at time.Time) Entry { return Entry{Kind: EntryUser, Text: "go", Time: at} }
	end := Entry{Kind: EntryTurnEnd, End: Completed, Time: after}
	for _, tc := range []struct {
		name         string
		entries      []Entry
		want         Outcome
		ended, found bool
	}{
		{"the killed agent's turn, never ended", []Entry{u(before)}, "", false, false},
		{"the killed agent's turn, ended", []Entry{u(before), end}, Completed, true, true},
		{"the live agent's own turn runs", []Entry{u(before), end, u(after)}, "", false, true},
		{"a message the record keeps no time for", []Entry{{Kind: EntryUser, Text: "go"}}, "", false, true},
	} {
		got, ended, found := LastTurn(tc.entries, launched)
		if got.End != tc.want || ended != tc.ended || found != tc.found {
			t.Errorf("%s: LastTurn = %q ended=%v found=%v, want %q %v %v", tc.name, got.End, ended, found, tc.want, tc.ended, tc.found)
		}
	}
}
