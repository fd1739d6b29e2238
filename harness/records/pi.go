package records

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// pi (@mariozechner/pi-coding-agent 0.73.1) writes one JSONL session file per
// launch under ~/.pi/agent/sessions/--<cwd with / as ->--/<time>_<uuid>.jsonl.
// The first line is a {"type":"session","cwd":...} header; every message is
// a {"type":"message","message":{"role":...}} line. Observed with the stub
// model: a prompt is recorded as a user message the moment it is submitted;
// the turn's end is an assistant message whose stopReason is "stop", "error"
// or "aborted" (Escape); "toolUse" means the turn goes on with a tool result.
// pi has no /help and does not reject unknown slash commands: "/help" and
// "/nosuchcmd" go to the model as ordinary user messages, while commands it
// runs itself (/hotkeys, /quit, ...) leave no line at all. A message typed
// while busy ("Steering: ...") is recorded only when it is delivered; on
// Escape it goes back into the composer and is never recorded.
func init() { readers["pi"] = func(w Where) Reader { return piReader{w} } }

type piReader struct{ w Where }

type piLine struct {
	Type      string `json:"type"`
	Cwd       string `json:"cwd"`
	Timestamp string `json:"timestamp"`
	Message   struct {
		Role         string          `json:"role"`
		Content      json.RawMessage `json:"content"`
		StopReason   string          `json:"stopReason"`
		ErrorMessage string          `json:"errorMessage"`
		ToolName     string          `json:"toolName"`
	} `json:"message"`
}

func (r piReader) UserMessages() ([]string, error) {
	lines, err := r.lines()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range lines {
		if l.Type == "message" && l.Message.Role == "user" {
			out = append(out, piText(l.Message.Content))
		}
	}
	return out, nil
}

// Entries: an assistant message holds the reply's text parts and its
// toolCall parts; a "toolResult" message is one tool's output; the
// assistant's stopReason ends the turn ("stop", "error", "aborted"), except
// "toolUse", after which the turn goes on with the tools' results.
func (r piReader) Entries() ([]Entry, error) {
	lines, err := r.lines()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, l := range lines {
		if l.Type != "message" {
			continue
		}
		at, m := stamp(l.Timestamp), l.Message
		switch m.Role {
		case "user":
			out = append(out, Entry{Kind: EntryUser, Time: at, Text: piText(m.Content)})
		case "toolResult":
			out = append(out, toolEntry(EntryToolResult, at, m.ToolName, piText(m.Content)))
		case "assistant":
			var parts []struct {
				Type, Text, Name string
				Arguments        json.RawMessage
			}
			json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				switch p.Type {
				case "text":
					out = append(out, Entry{Kind: EntryReply, Time: at, Text: p.Text})
				case "toolCall":
					out = append(out, toolEntry(EntryToolCall, at, p.Name, toolText(p.Arguments)))
				}
			}
			if end, ok := piEnds[m.StopReason]; ok {
				out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: end, Text: m.ErrorMessage})
			}
		}
	}
	return out, nil
}

// piEnds are the stop reasons that end a turn.
var piEnds = map[string]Outcome{"stop": Completed, "length": Completed, "error": Failed, "aborted": Cancelled}

// TurnRunning reads the last user, assistant or tool-result message of the
// newest session. pi retries a connection error in place ("Retrying (1/3)")
// after recording an assistant error, so during that back-off the record
// reads as ended; the stub's 400 is not retried.
func (r piReader) TurnRunning() (bool, error) {
	lines, err := newestRecords[piLine](r.sessions())
	if err != nil {
		return false, err
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Type != "message" {
			continue
		}
		switch m := lines[i].Message; m.Role {
		case "user", "toolResult":
			return true, nil
		case "assistant":
			return m.StopReason == "toolUse", nil
		}
	}
	return false, nil
}

// CancelledSince reports whether the newest session holds an assistant
// message pi stopped as "aborted" (its Escape during a model call) stamped
// at or after at: the proof for an attempt pi never recorded as running,
// a retry under way (pi records an attempt only when it ends).
func (r piReader) CancelledSince(at time.Time) (bool, error) {
	lines, err := newestRecords[piLine](r.sessions())
	return markedSince(lines, err, at, func(l piLine) (string, bool) {
		return l.Timestamp, l.Type == "message" && l.Message.Role == "assistant" && l.Message.StopReason == "aborted"
	})
}

// lines returns every line of every session this worktree had, oldest
// session first (a relaunch starts a new file).
func (r piReader) lines() ([]piLine, error) {
	files, err := r.sessions()
	if err != nil {
		return nil, err
	}
	var all []piLine
	for _, f := range files {
		ls, err := readJSONLines[piLine](f)
		if err != nil {
			return nil, err
		}
		all = append(all, ls...)
	}
	return all, nil
}

// sessions lists the session files whose header names r.w.Worktree, oldest
// first. The header's cwd is the one fact pi promises; the directory name is
// a lossy encoding of it.
func (r piReader) sessions() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(r.w.Home, ".pi", "agent", "sessions", "*", "*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("list pi sessions: %w", err)
	}
	var mine []string
	for _, f := range files {
		lines, err := readJSONLines[piLine](f)
		if err != nil {
			return nil, err
		}
		if len(lines) > 0 && lines[0].Type == "session" && lines[0].Cwd == r.w.Worktree {
			mine = append(mine, f)
		}
	}
	// File names start with the session's UTC start time.
	sort.Slice(mine, func(i, j int) bool { return filepath.Base(mine[i]) < filepath.Base(mine[j]) })
	return mine, nil
}

// piText joins the text parts of a user message (a string or a list of
// typed parts; images carry no text).
func piText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct{ Type, Text string }
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// newestRecords reads the newest of files (oldest first, as each reader's
// lister returns them): the session a turn can still be running in. No file
// yet is no record, not an error.
func newestRecords[T any](files []string, err error) ([]T, error) {
	if err != nil || len(files) == 0 {
		return nil, err
	}
	return readJSONLines[T](files[len(files)-1])
}

// firstJSONLine decodes only the first line of a JSONL file: the header
// naming the session's directory, read for every file a lister considers
// without reading the whole of each (a user's codex keeps thousands).
func firstJSONLine[T any](path string) (T, error) {
	var v T
	f, err := os.Open(path)
	if err != nil {
		return v, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return v, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(bytes.TrimSpace(line), &v); err != nil {
		return v, fmt.Errorf("%s line 1: %w", path, err)
	}
	return v, nil
}

// readJSONLines decodes a JSONL file written by a live agent. Only complete
// lines count: the last one may be half written (no newline yet), and a line
// that does not decode is skipped only when it is that last one.
func readJSONLines[T any](path string) ([]T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			last := !bytes.HasSuffix(data, []byte("\n")) && bytes.HasSuffix(bytes.TrimSpace(data), line)
			if last {
				break
			}
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}
