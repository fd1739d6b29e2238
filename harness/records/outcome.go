package records

// LastTurn is how the agent's newest turn stands in its own record: the
// outcome of its turn end, or "" while the record shows no end after the
// newest user message (a turn still running, or one whose end the record
// writes only later: gemini rewrites its answer's line until the next
// prompt). ok is false for a record with no user message at all.
func LastTurn(entries []Entry) (end Outcome, ended, ok bool) {
	last := -1
	for i, e := range entries {
		if e.Kind == EntryUser {
			last = i
		}
	}
	if last < 0 {
		return "", false, false
	}
	for _, e := range entries[last+1:] {
		if e.Kind == EntryTurnEnd {
			end, ended = e.End, true
		}
	}
	return end, ended, true
}
