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
	end, ended, found := t.LiveTurn(r)
	v := turnView{Outcome: end.End, Ended: ended, Read: found, At: end.Time}
	if end.End == records.Failed {
		v.Error = end.Text
	}
	return v
}
