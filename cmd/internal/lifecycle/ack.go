package lifecycle

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/state"
)

// cancelAck watches an adapter-owned acknowledgement that an interrupt
// cancelled the running turn. Busy state is never evidence: interrupt does not
// rewrite it, and a harness's own busy hook may lag.
type cancelAck struct {
	logPath string // muse session log (JSON lines)
	runID   string // the run active before the keys were sent
	// noRun: the log was read before the keys and no run was active in
	// it, the agent's own word that there was no turn to cancel.
	noRun bool
}

// startAck finds, before the keys are sent, the run the interrupt should
// cancel. Only muse has an acknowledgement: its session log records
// terminal=cancelled for an interrupted run.
func (c *Verbs) startAck(t *task.Target) cancelAck {
	if t.Harness.Ack != harness.AckMuseSessionTerminal {
		return cancelAck{}
	}
	data, err := state.ReadSmallFile(filepath.Join(t.Store.Dir, t.Harness.Ack.PointerFile(t.ID)), 4096)
	if err != nil {
		return cancelAck{}
	}
	logPath := strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0])
	if logPath == "" {
		return cancelAck{}
	}
	events, read := readMuseLog(logPath)
	active := ""
	for _, e := range events {
		switch {
		case e.Terminal == "" && e.RunID != "":
			active = e.RunID
		case e.Terminal != "" && e.RunID == active:
			active = ""
		}
	}
	return cancelAck{logPath: logPath, runID: active, noRun: active == "" && read}
}

type museEvent struct {
	Type     string `json:"type"`
	RunID    string `json:"run_id"`
	Terminal string `json:"terminal"`
}

// readMuseLog reads the session log's events; ok is false when it cannot
// be read at all.
func readMuseLog(path string) (events []museEvent, ok bool) {
	data, err := state.ReadSmallFile(path, 16<<20)
	if err != nil {
		return nil, false
	}
	var out []museEvent
	for _, line := range strings.Split(string(data), "\n") {
		var e museEvent
		if json.Unmarshal([]byte(line), &e) == nil {
			out = append(out, e)
		}
	}
	return out, true
}

// pending reports whether wait will watch for an acknowledgement.
func (a cancelAck) pending() bool { return a.runID != "" }

// wait polls for the run's terminal event: "cancelled" confirms, any other
// terminal or the deadline leaves the cancel unconfirmed. A log that showed
// no run before the keys says no-turn.
func (a cancelAck) wait(ctx context.Context, w Waits) string {
	if a.noRun {
		return CancelNoTurn
	}
	if a.runID == "" {
		return CancelUnconfirmed
	}
	deadline := time.Now().Add(w.Settle)
	poll := w.Backoff()
	for {
		events, _ := readMuseLog(a.logPath)
		for _, e := range events {
			if e.RunID == a.runID && e.Terminal != "" {
				if e.Terminal == "cancelled" {
					return CancelConfirmed
				}
				return CancelUnconfirmed
			}
		}
		if time.Now().After(deadline) {
			return CancelUnconfirmed
		}
		if poll.Sleep(ctx) != nil {
			return CancelUnconfirmed
		}
	}
}
