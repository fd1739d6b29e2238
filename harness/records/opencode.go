package records

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// opencode (opencode-ai 1.18.33) keeps everything in one SQLite database,
// ~/.local/share/opencode/opencode.db (WAL mode, written while it runs):
// session(id, parent_id, directory, time_created), message(id, session_id,
// time_created, data JSON {"role", "time":{"created","completed"}, "error"})
// and part(id, message_id, data JSON {"type":"text","text",
// "synthetic"?}). Observed with the stub model:
//   - a prompt becomes a user message with one text part the moment it is
//     submitted, and its assistant message is created within ~50 ms, long
//     before the request (the first prompt of a run waited ~10 s for start-up);
//   - the assistant's time.completed is set when the turn ends: finished,
//     failed (error APIError) or cancelled (error MessageAbortedError);
//   - a message submitted while busy (shown QUEUED) is a user message at
//     once; when the busy turn is interrupted it stays recorded but is never
//     answered or sent;
//   - slash commands opencode runs itself (/help, /exit) and unknown ones
//     (which it refuses to submit) leave no message.
//
// It is read with the sqlite3 CLI (read-only, bounded) rather than
// `opencode export`: the CLI is a 185 MB binary that takes seconds to start
// and needs a session id, while one query answers both questions.
//
// kilo (@kilocode/cli 7.7.7), an opencode fork, keeps the same tables with
// the same JSON in ~/.local/share/kilo/kilo.db, so one reader serves both.
func init() {
	readers["opencode"] = func(w Where) Reader { return opencodeReader{w: w, app: "opencode"} }
	readers["kilo"] = func(w Where) Reader { return opencodeReader{w: w, app: "kilo"} }
}

// opencodeReader reads the database of app, which names both its data
// directory under ~/.local/share and the database file's prefix.
type opencodeReader struct {
	w   Where
	app string
}

// opencodeTimeout bounds one sqlite3 call; a WAL read never waits for the
// writer, so this only trips on a wedged machine.
const opencodeTimeout = 10 * time.Second

// opencodeRow is one part of one message of one top-level session (a
// message without parts comes with empty part fields).
type opencodeRow struct {
	Dir       string          `json:"dir"`
	SessionID string          `json:"sid"`
	Role      string          `json:"role"`
	Completed json.RawMessage `json:"completed"`
	PartType  string          `json:"ptype"`
	Text      string          `json:"text"`
	Synthetic json.RawMessage `json:"synthetic"`
	Ignored   json.RawMessage `json:"ignored"`
	MessageID string          `json:"mid"`
}

// opencodeQuery lists every part of every message of the sessions started by
// the user (subagent sessions have a parent_id), oldest first. Directory
// filtering happens in Go so that no path is spliced into SQL.
const opencodeQuery = `SELECT s.directory AS dir, s.id AS sid, m.id AS mid,
 json_extract(m.data, '$.role') AS role,
 json_extract(m.data, '$.time.completed') AS completed,
 json_extract(p.data, '$.type') AS ptype,
 json_extract(p.data, '$.text') AS text,
 json_extract(p.data, '$.synthetic') AS synthetic,
 json_extract(p.data, '$.ignored') AS ignored
FROM session s JOIN message m ON m.session_id = s.id
LEFT JOIN part p ON p.message_id = m.id
WHERE s.parent_id IS NULL
ORDER BY s.time_created, s.id, m.time_created, m.id, p.id`

// UserMessages joins the text the user typed (not the synthetic parts
// opencode adds for attached files) of each user message.
func (r opencodeReader) UserMessages() ([]string, error) {
	rows, err := r.rows()
	if err != nil {
		return nil, err
	}
	var out []string
	last := ""
	for _, row := range rows {
		if row.Role != "user" {
			continue
		}
		if row.MessageID != last {
			out = append(out, "")
			last = row.MessageID
		}
		if row.PartType == "text" && !opencodeTrue(row.Synthetic) && !opencodeTrue(row.Ignored) {
			out[len(out)-1] += row.Text
		}
	}
	return out, nil
}

// TurnRunning: the newest session's last assistant message has no
// time.completed yet. A user message with no assistant after it is not a
// running turn: it is either a queued message stranded by an interrupt, or
// one submitted in the ~50 ms before its assistant message exists.
func (r opencodeReader) TurnRunning() (bool, error) {
	rows, err := r.rows()
	if err != nil || len(rows) == 0 {
		return false, err
	}
	newest := rows[len(rows)-1].SessionID
	running := false
	for _, row := range rows {
		if row.SessionID == newest && row.Role == "assistant" {
			running = !opencodeTrue(row.Completed)
		}
	}
	return running, nil
}

// rows reads every database the app keeps under this HOME (a release
// channel other than "latest" gets its own <app>-<channel>.db).
func (r opencodeReader) rows() ([]opencodeRow, error) {
	dbs, err := filepath.Glob(filepath.Join(r.w.Home, ".local", "share", r.app, r.app+"*.db"))
	if err != nil {
		return nil, fmt.Errorf("list %s databases: %w", r.app, err)
	}
	var mine []opencodeRow
	for _, db := range dbs {
		rows, err := r.query(db)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			if row.Dir == r.w.Worktree {
				mine = append(mine, row)
			}
		}
	}
	return mine, nil
}

func (r opencodeReader) query(db string) ([]opencodeRow, error) {
	if r.w.Query == nil {
		return nil, fmt.Errorf("read %s database %s: no SQLite reader was given", r.app, db)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opencodeTimeout)
	defer cancel()
	out, err := r.w.Query(ctx, db, opencodeQuery)
	if err != nil {
		return nil, fmt.Errorf("read %s database %s: %w", r.app, db, err)
	}
	var rows []opencodeRow
	if len(strings.TrimSpace(string(out))) == 0 {
		return nil, nil // sqlite3 prints nothing for no rows
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		return nil, fmt.Errorf("decode %s database %s: %w", r.app, db, err)
	}
	return rows, nil
}

// opencodeTrue reads a JSON value sqlite3 printed for a json_extract: null
// or absent is false, a timestamp or true is true.
func opencodeTrue(v json.RawMessage) bool {
	s := strings.TrimSpace(string(v))
	return s != "" && s != "null" && s != "false" && s != "0"
}
