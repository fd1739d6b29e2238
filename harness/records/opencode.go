package records

import (
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

// opencodeRow is one part of one message of one top-level session (a
// message without parts comes with empty part fields).
type opencodeRow struct {
	Dir       string          `json:"dir"`
	SessionID string          `json:"sid"`
	SessionAt int64           `json:"screated"` // when the session began, in ms
	Role      string          `json:"role"`
	Completed json.RawMessage `json:"completed"`
	PartType  string          `json:"ptype"`
	Text      string          `json:"text"`
	Synthetic json.RawMessage `json:"synthetic"`
	Ignored   json.RawMessage `json:"ignored"`
	MessageID string          `json:"mid"`
	Created   int64           `json:"created"`
	Finish    string          `json:"finish"`
	ErrorName string          `json:"ename"`
	ErrorText string          `json:"emsg"`
	Tool      string          `json:"tool"`
	Status    string          `json:"tstatus"`
	Input     string          `json:"tinput"`
	Output    string          `json:"toutput"`
	ToolError string          `json:"terror"`
}

// opencodeQuery lists every part of every message of the sessions started by
// the user (subagent sessions have a parent_id), oldest first. Directory
// filtering happens in Go so that no path is spliced into SQL.
const opencodeQuery = `SELECT s.directory AS dir, s.id AS sid, s.time_created AS screated, m.id AS mid,
 json_extract(m.data, '$.role') AS role,
 json_extract(m.data, '$.time.completed') AS completed,
 json_extract(p.data, '$.type') AS ptype,
 json_extract(p.data, '$.text') AS text,
 json_extract(p.data, '$.synthetic') AS synthetic,
 json_extract(p.data, '$.ignored') AS ignored,
 json_extract(m.data, '$.time.created') AS created,
 json_extract(m.data, '$.finish') AS finish,
 json_extract(m.data, '$.error.name') AS ename,
 json_extract(m.data, '$.error.data.message') AS emsg,
 json_extract(p.data, '$.tool') AS tool,
 json_extract(p.data, '$.state.status') AS tstatus,
 json_extract(p.data, '$.state.input') AS tinput,
 json_extract(p.data, '$.state.output') AS toutput,
 json_extract(p.data, '$.state.error') AS terror
FROM session s JOIN message m ON m.session_id = s.id
LEFT JOIN part p ON p.message_id = m.id
WHERE s.parent_id IS NULL
ORDER BY s.time_created, s.id, m.time_created, m.id, p.id`

// UserMessages joins the text the user typed (not the synthetic parts
// opencode adds for attached files) of each user message.
func (r opencodeReader) UserMessages() ([]string, error) {
	return userTexts(r.Entries())
}

// Entries: a user message is one entry; an assistant message's text parts
// are the reply and each "tool" part a call with its result once its state
// has one. An assistant message is one step of a turn: completed with
// finish "tool-calls" the turn goes on; completed otherwise it ends,
// cancelled with MessageAbortedError, failed with any other error.
func (r opencodeReader) Entries() ([]Entry, error) {
	rows, err := r.rows()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for i, row := range rows {
		at := millis(row.Created)
		first := i == 0 || rows[i-1].MessageID != row.MessageID
		if row.Role == "user" {
			if first {
				out = append(out, Entry{Kind: EntryUser, Time: at})
			}
			if row.PartType == "text" && !opencodeTrue(row.Synthetic) && !opencodeTrue(row.Ignored) {
				out[len(out)-1].Text += row.Text
			}
			continue
		}
		out = append(out, row.partEntries(at)...)
		if last := i == len(rows)-1 || rows[i+1].MessageID != row.MessageID; last {
			if end, ok := row.turnEnd(); ok {
				out = append(out, end)
			}
		}
	}
	return out, nil
}

func (row opencodeRow) partEntries(at time.Time) []Entry {
	switch {
	case row.PartType == "text" && !opencodeTrue(row.Synthetic) && row.Text != "":
		return []Entry{{Kind: EntryReply, Time: at, Text: row.Text}}
	case row.PartType != "tool":
		return nil
	}
	out := []Entry{toolEntry(EntryToolCall, at, row.Tool, row.Input)}
	switch row.Status {
	case "completed":
		out = append(out, toolEntry(EntryToolResult, at, row.Tool, row.Output))
	case "error":
		out = append(out, toolEntry(EntryToolResult, at, row.Tool, row.ToolError))
	}
	return out
}

// opencodeAborted is the error opencode records on a cancelled turn.
const opencodeAborted = "MessageAbortedError"

// turnEnd is the end an assistant message's row records, if it ends the
// turn.
func (row opencodeRow) turnEnd() (Entry, bool) {
	var done int64
	if json.Unmarshal(row.Completed, &done) != nil || done == 0 {
		return Entry{}, false
	}
	end := Entry{Kind: EntryTurnEnd, Time: millis(done), End: Completed}
	switch {
	case row.ErrorName == opencodeAborted:
		end.End = Cancelled
	case row.ErrorName != "":
		end.End, end.Text = Failed, row.ErrorText
	case row.Finish == "tool-calls":
		return Entry{}, false
	case row.Finish == "":
		// Ended with neither an answer's finish nor an error: how 1.18.33
		// records a turn interrupted while it waited out a retry of its
		// model call (the tier's overload, 5xx, cut and down turns).
		end.End = Cancelled
	}
	return end, true
}

// TurnRunning: the newest session's last assistant message has no
// time.completed yet. A user message with no assistant after it is not a
// running turn: it is either a queued message stranded by an interrupt, or
// one submitted in the ~50 ms before its assistant message exists. A newest
// session begun before the live agent (Where.Since) is an earlier agent's:
// kilo, relaunched into an outage under load, had not begun its own a
// minute later, and the killed agent's unfinished turn read as running.
func (r opencodeReader) TurnRunning() (bool, error) {
	rows, err := r.rows()
	if err != nil || len(rows) == 0 {
		return false, err
	}
	last := rows[len(rows)-1]
	if !r.w.Since.IsZero() && millis(last.SessionAt).Before(r.w.Since) {
		return false, nil
	}
	newest := last.SessionID
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
	var rows []opencodeRow
	err := queryRows(r.w, r.app+" database", db, opencodeQuery, &rows)
	return rows, err
}

// opencodeTrue reads a JSON value sqlite3 printed for a json_extract: null
// or absent is false, a timestamp or true is true.
func opencodeTrue(v json.RawMessage) bool {
	s := strings.TrimSpace(string(v))
	return s != "" && s != "null" && s != "false" && s != "0"
}
