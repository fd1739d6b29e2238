package records

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// A cline TUI that finds the hub daemon of its HOME running (every one but
// the first, which starts it) runs its session there, whatever
// CLINE_SESSION_BACKEND_MODE says (3.0.65's TUI asks for "auto"), and the
// hub logs no session.input_sent. It keeps its own event log instead, in
// ~/.cline/data/db/hub-events-hub-production.db: as each run starts it
// records a capability.requested "hook.beforeRun" holding a snapshot of the
// whole conversation, the prompt that starts the run its last user
// message (seen in the tier's outage-relaunch and by hand,
// tests/captures/notes-cline.md). The newest such snapshot of a session is
// its conversation at its newest submit, ahead of messages.json, which the
// hub writes when the turn ends.
const clineHubEvents = "hub-events-hub-production.db"

// clineHubQuery gives the newest beforeRun snapshot's messages of each
// session (sqlite3 -json; the events table is indexed by session and
// sequence).
const clineHubQuery = `SELECT session_id AS sid,
 json_extract(envelope_json, '$.payload.payload.context.snapshot.messages') AS msgs
FROM hub_events e
WHERE event = 'capability.requested'
 AND json_extract(envelope_json, '$.payload.capabilityName') = 'hook.beforeRun'
 AND sequence = (SELECT max(sequence) FROM hub_events f
  WHERE f.session_id = e.session_id AND f.event = 'capability.requested'
  AND json_extract(f.envelope_json, '$.payload.capabilityName') = 'hook.beforeRun')`

// hubPrompts reads the conversation of each session's newest run start
// from the hub's event log, by session id; a HOME whose hub never ran has
// none.
func (r clineReader) hubPrompts() (map[string][]clineMessage, error) {
	db := filepath.Join(r.w.Home, ".cline", "data", "db", clineHubEvents)
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var rows []struct {
		SID  string `json:"sid"`
		Msgs string `json:"msgs"` // json_extract gives the list as JSON text
	}
	if err := queryRows(r.w, "cline's hub events", db, clineHubQuery, &rows); err != nil {
		return nil, err
	}
	convs := map[string][]clineMessage{}
	for _, row := range rows {
		var msgs []clineMessage
		if json.Unmarshal([]byte(row.Msgs), &msgs) != nil {
			continue // a snapshot cut short: messages.json stands
		}
		convs[row.SID] = msgs
	}
	return convs, nil
}

// clinePrompts are a user message's prompts: its text parts, unwrapped (a
// tool result is a user message of tool_result parts, and no prompt).
func clinePrompts(parts []clineContent) []string {
	var out []string
	for _, c := range parts {
		if c.Type == "text" {
			out = append(out, clineUnwrap(c.Text))
		}
	}
	return out
}
