package control

import (
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/task"
	"fmctl/harness/records"
)

// turnView is the newest turn as the agent's own record tells it.
type turnView struct {
	Outcome records.Outcome // completed, failed or cancelled; "" not said
	Ended   bool            // the record marks the newest turn over
	Error   string          // a failed turn's error, as recorded
	At      time.Time       // when the record ended it; zero where it keeps no time
	Read    bool            // the record was read and holds a user message
}

// lastTurn reads the live agent's record once for how its newest turn
// ended: idle says only that no turn runs, not whether the agent answered,
// gave up after its retries, or was cancelled.
func lastTurn(t *task.Target, obs backends.Observation) turnView {
	r, ok := t.AgentRecord(obs)
	if !ok {
		return turnView{}
	}
	tr, ok := r.(records.Transcript)
	if !ok {
		return turnView{}
	}
	entries, err := tr.Entries()
	if err != nil {
		return turnView{}
	}
	end, ended, found := records.LastTurn(entries)
	v := turnView{Outcome: end, Ended: ended, Read: found}
	if !ended {
		return v
	}
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Kind == records.EntryTurnEnd {
			v.At = entries[i].Time
			if end == records.Failed {
				v.Error = entries[i].Text
			}
			break
		}
	}
	return v
}
