package records

import "testing"

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
		got, ended, found := LastTurn(tc.entries)
		if got != tc.want || ended != tc.ended || found != tc.found {
			t.Errorf("%s: LastTurn = %q ended=%v found=%v, want %q %v %v", tc.name, got, ended, found, tc.want, tc.ended, tc.found)
		}
	}
}
