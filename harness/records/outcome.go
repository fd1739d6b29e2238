package records

import "time"

// LastTurn is how the agent's newest turn stands in its own record: its
// turn end (End the outcome, Time when, Text a failure's error), or none
// (ended false) while the record shows no end after the
// newest user message (a turn still running, or one whose end the record
// writes only later: gemini rewrites its answer's line until the next
// prompt). ok is false for a record with no user message at all.
//
// since, when not zero, is when the live agent was launched (Where.Since):
// a newest user message stamped before it with no end after it is a turn
// an earlier agent left unfinished when it was killed, which runs nowhere
// now, so the live agent has no turn yet (ok false). A kilo relaunched
// under load had not begun its own session a minute later, and the killed
// agent's turn read as running beside the new agent's idle report.
func LastTurn(entries []Entry, since time.Time) (end Entry, ended, ok bool) {
	last := -1
	for i, e := range entries {
		if e.Kind == EntryUser {
			last = i
		}
	}
	if last < 0 {
		return Entry{}, false, false
	}
	for _, e := range entries[last+1:] {
		if e.Kind == EntryTurnEnd {
			end, ended = e, true
		}
	}
	if !ended && !since.IsZero() && !entries[last].Time.IsZero() && entries[last].Time.Before(since) {
		return Entry{}, false, false
	}
	return end, ended, true
}
