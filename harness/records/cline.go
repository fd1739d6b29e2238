package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// cline (3.0.65) keeps each TUI session in
// ~/.cline/data/sessions/<id>/: <id>.json names its cwd, its start and a
// status, and <id>.messages.json holds the conversation. Observed with the
// stub model (tests/captures/notes-cline.md):
//   - a prompt is written to messages.json only when its turn ends (a
//     reply, or Escape), wrapped as <user_input mode="act">…</user_input>;
//     a tool result is a user message of tool_result parts, not a prompt;
//   - an interrupt leaves no marker in messages.json (the prompt stands
//     with no answer after it), so the turn's state is read from <id>.json:
//     status "running" from the submit to the turn's end, "pending" while a
//     permission dialog waits, "idle" after a reply or a cancel, and
//     "completed" once the TUI exits;
//   - a text typed while busy is queued by the TUI and recorded only when
//     it is sent as its own turn;
//   - a turn whose model calls failed for good ends in an assistant
//     message cline marks displayRole "error", holding the error;
//   - its log (~/.cline/data/logs/cline.log) stamps each prompt as cline
//     takes it (Submissions), long before the prompt reaches messages.json.
func init() { readers["cline"] = func(w Where) Reader { return clineReader{w} } }

type clineReader struct{ w Where }

type clineSession struct {
	SessionID string `json:"session_id"`
	// Prompt is the prompt the session was started with (the launch
	// prompt), written as cline creates the session, long before the turn
	// it starts ends and messages.json is written.
	Prompt    string `json:"prompt"`
	Cwd       string `json:"cwd"`
	StartedAt string `json:"started_at"`
	Status    string `json:"status"`
	dir       string
}

type clineMessages struct {
	Messages []clineMessage `json:"messages"`
}

// clineMessage is one message of a conversation. A session cline starts
// in place of one whose run failed to start carries the old one's
// messages over under their ids, so a message id seen in an older session
// is that message again, not a new one.
type clineMessage struct {
	ID      string         `json:"id"`
	Role    string         `json:"role"`
	TS      int64          `json:"ts"` // Unix milliseconds
	Content []clineContent `json:"content"`
	// DisplayRole "error" marks the message cline writes in place of a
	// reply when the turn's model calls failed for good.
	Metadata struct {
		DisplayRole string `json:"displayRole"`
	} `json:"metadata"`
}

// fresh drops the messages an older session held (seen, by id), and
// marks these seen.
func fresh(msgs []clineMessage, seen map[string]bool) []clineMessage {
	var out []clineMessage
	for _, m := range msgs {
		if m.ID != "" && seen[m.ID] {
			continue
		}
		if m.ID != "" {
			seen[m.ID] = true
		}
		out = append(out, m)
	}
	return out
}

// clineContent is one part of a message: text, a tool_use or a tool_result.
type clineContent struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`    // tool_use, tool_result
	Input   json.RawMessage `json:"input"`   // tool_use
	Content json.RawMessage `json:"content"` // tool_result
}

// clineUserInput is cline's wrapper around a prompt; its mode is the
// TUI's act or plan mode.
var clineUserInput = regexp.MustCompile(`(?s)^<user_input mode="[a-z]+">(.*)</user_input>$`)

// clineUnwrap is a prompt as typed, out of cline's wrapper.
func clineUnwrap(text string) string {
	if sub := clineUserInput.FindStringSubmatch(text); sub != nil {
		return sub[1]
	}
	return text
}

func (r clineReader) UserMessages() ([]string, error) {
	sessions, err := r.sessions()
	if err != nil {
		return nil, err
	}
	return r.userMessages(sessions)
}

// Sheet reads the sessions once for both the prompts their records hold
// and the prompts the log says they took.
func (r clineReader) Sheet() (Sheet, error) {
	sessions, err := r.sessions()
	if err != nil {
		return Sheet{}, err
	}
	var sh Sheet
	if sh.Messages, err = r.userMessages(sessions); err != nil {
		return sh, err
	}
	sh.Submissions, err = r.submissions(sessions)
	return sh, err
}

func (r clineReader) userMessages(sessions []clineSession) ([]string, error) {
	if len(sessions) == 0 {
		return nil, nil
	}
	hub, err := r.hubPrompts()
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range sessions {
		// The conversation at the newest turn's end, or at the newest
		// run's start (a hub-hosted session), whichever is longer; a
		// session with neither yet holds the prompt it was created with.
		var m clineMessages
		err := readJSONFile(filepath.Join(s.dir, s.SessionID+".messages.json"), &m)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		msgs := m.Messages
		if started := hub[s.SessionID]; len(started) > len(msgs) {
			msgs = started
		}
		if len(msgs) == 0 && s.Prompt != "" {
			out = append(out, clineUnwrap(s.Prompt))
			continue
		}
		for _, msg := range fresh(msgs, seen) {
			if msg.Role == "user" {
				out = append(out, clinePrompts(msg.Content)...)
			}
		}
	}
	return out, nil
}

// Entries reads every session's conversation. cline marks no turn's end:
// a reply with no tool call after it is a completed turn, and a prompt
// that the next prompt follows with no reply between (cline writes a
// prompt only when its turn ends) was cancelled; so was the newest one
// once its session says no turn runs.
func (r clineReader) Entries() ([]Entry, error) {
	sessions, err := r.sessions()
	if err != nil {
		return nil, err
	}
	var out []Entry
	seen := map[string]bool{}
	for _, s := range sessions {
		var m clineMessages
		if err := readJSONFile(filepath.Join(s.dir, s.SessionID+".messages.json"), &m); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		answered := true // no prompt is waiting for its turn's end
		for _, msg := range fresh(m.Messages, seen) {
			at := millis(msg.TS)
			if msg.Role == "assistant" && msg.Metadata.DisplayRole == "error" {
				out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Failed, Text: clineText(msg.Content)})
				answered = true
				continue
			}
			for _, c := range msg.Content {
				switch {
				case msg.Role == "user" && c.Type == "text":
					if !answered {
						out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Cancelled})
					}
					out = append(out, Entry{Kind: EntryUser, Time: at, Text: clineUnwrap(c.Text)})
					answered = false
				case c.Type == "text" && c.Text != "":
					out = append(out, Entry{Kind: EntryReply, Time: at, Text: c.Text})
				case c.Type == "tool_use":
					out = append(out, toolEntry(EntryToolCall, at, c.Name, toolText(c.Input)))
				case c.Type == "tool_result":
					out = append(out, toolEntry(EntryToolResult, at, c.Name, toolText(c.Content)))
				}
			}
			if msg.Role == "assistant" && !slices.ContainsFunc(msg.Content, func(c clineContent) bool { return c.Type == "tool_use" }) {
				out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Completed})
				answered = true
			}
		}
		if !answered && s.Status != "running" && s.Status != "pending" {
			out = append(out, Entry{Kind: EntryTurnEnd, End: Cancelled})
		}
	}
	return out, nil
}

// clineText joins a message's text parts.
func clineText(parts []clineContent) string {
	var texts []string
	for _, c := range parts {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// TurnRunning reads the newest session's status: a turn runs from its
// submit ("running") through any permission dialog ("pending").
func (r clineReader) TurnRunning() (bool, error) {
	sessions, err := r.sessions()
	if err != nil || len(sessions) == 0 {
		return false, err
	}
	switch sessions[len(sessions)-1].Status {
	case "running", "pending":
		return true, nil
	}
	return false, nil
}

// Activity reads the newest session's status: "running" is busy,
// "pending" waits at a permission dialog, "idle" follows a reply or a
// cancel; "completed" (the TUI exited) says none.
func (r clineReader) Activity() (string, error) {
	sessions, err := r.sessions()
	if err != nil || len(sessions) == 0 {
		return "", err
	}
	switch sessions[len(sessions)-1].Status {
	case "running":
		return "busy", nil
	case "pending":
		return "waiting", nil
	case "idle", "failed": // "failed": its newest turn failed for good
		return "idle", nil
	}
	return "", nil
}

// sessions lists the sessions whose cwd is r.w.Worktree, oldest first.
func (r clineReader) sessions() ([]clineSession, error) {
	files, err := filepath.Glob(filepath.Join(r.w.Home, ".cline", "data", "sessions", "*", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list cline sessions: %w", err)
	}
	var mine []clineSession
	for _, f := range files {
		dir := filepath.Dir(f)
		if filepath.Base(f) != filepath.Base(dir)+".json" {
			continue // the messages file
		}
		var s clineSession
		if err := readJSONFile(f, &s); err != nil {
			return nil, err
		}
		if s.Cwd == r.w.Worktree && s.SessionID != "" {
			s.dir = dir
			mine = append(mine, s)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].StartedAt < mine[j].StartedAt })
	return mine, nil
}

// readJSONFile decodes one JSON document a live agent rewrites whole.
func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}
