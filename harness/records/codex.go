package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// codex (@openai/codex 0.171.0) writes one rollout per session to
// ~/.codex/sessions/YYYY/MM/DD/rollout-<start time>-<id>.jsonl; its first
// line is a session_meta naming the cwd. Observed with the stub model:
//   - a turn is event_msg "task_started" .. "task_complete" (also after the
//     400) or "turn_aborted" (Escape, the C-c menu's Cancel), tied by turn_id;
//   - each prompt is one event_msg "item_completed" whose item is a
//     "UserMessage", holding the text as submitted; the response_item "user"
//     messages also carry codex's own context blocks, so they are not used;
//   - messages typed while busy are not recorded until Escape sends them:
//     then they become one turn and one UserMessage, joined by "\n";
//   - unrecognized commands (/nosuchcmd, and /help, which this version does
//     not have) and commands codex runs itself (/status) leave no line;
//   - /quit during a turn leaves it running in the app-server daemon, and
//     the rollout shows it open until the daemon ends it.
func init() { readers["codex"] = func(w Where) Reader { return codexReader{w} } }

type codexReader struct{ w Where }

type codexLine struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Payload   struct {
		Type   string `json:"type"`
		Cwd    string `json:"cwd"`
		TurnID string `json:"turn_id"`
		// response_item fields: a message's role and content, a tool
		// call's name and input, a tool output's call id and output.
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Name      string          `json:"name"`
		CallID    string          `json:"call_id"`
		Arguments json.RawMessage `json:"arguments"`
		Input     json.RawMessage `json:"input"`
		Output    json.RawMessage `json:"output"`
		Error     json.RawMessage `json:"error"` // task_complete's, when the turn failed
		Item      struct {
			Type    string `json:"type"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"item"`
	} `json:"payload"`
}

func (r codexReader) UserMessages() ([]string, error) {
	return userTexts(r.Entries())
}

// Entries: the user's messages are event_msg UserMessage items; the reply
// and the tools are response_items (an assistant "message", a function or
// custom tool call and its output, tied by call_id); a turn ends with
// task_complete (failed when it carries an error) or turn_aborted.
func (r codexReader) Entries() ([]Entry, error) {
	files, err := r.rollouts()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, f := range files {
		lines, err := readJSONLines[codexLine](f)
		if err != nil {
			return nil, err
		}
		tools := map[string]string{}
		for _, l := range lines {
			if e, ok := l.entry(tools); ok {
				out = append(out, e...)
			}
		}
	}
	return out, nil
}

func (l codexLine) entry(tools map[string]string) ([]Entry, bool) {
	at, p := stamp(l.Timestamp), l.Payload
	switch {
	case l.Type == "event_msg" && p.Type == "item_completed" && p.Item.Type == "UserMessage":
		var b strings.Builder
		for _, c := range p.Item.Content {
			if c.Type == "text" {
				b.WriteString(c.Text)
			}
		}
		return []Entry{{Kind: EntryUser, Time: at, Text: b.String()}}, true
	case l.Type == "event_msg" && p.Type == "task_complete":
		end := Entry{Kind: EntryTurnEnd, Time: at, End: Completed}
		if opencodeTrue(p.Error) {
			var e struct{ Message string }
			json.Unmarshal(p.Error, &e)
			end.End, end.Text = Failed, e.Message
		}
		return []Entry{end}, true
	case l.Type == "event_msg" && p.Type == "turn_aborted":
		return []Entry{{Kind: EntryTurnEnd, Time: at, End: Cancelled}}, true
	case l.Type != "response_item":
		return nil, false
	case p.Type == "message" && p.Role == "assistant":
		var parts []struct{ Type, Text string }
		json.Unmarshal(p.Content, &parts)
		var out []Entry
		for _, c := range parts {
			if c.Type == "output_text" {
				out = append(out, Entry{Kind: EntryReply, Time: at, Text: c.Text})
			}
		}
		return out, true
	case p.Type == "function_call" || p.Type == "custom_tool_call" || p.Type == "local_shell_call":
		tools[p.CallID] = p.Name
		input := p.Arguments
		if len(input) == 0 {
			input = p.Input
		}
		return []Entry{toolEntry(EntryToolCall, at, p.Name, toolText(input))}, true
	case p.Type == "function_call_output" || p.Type == "custom_tool_call_output":
		return []Entry{toolEntry(EntryToolResult, at, tools[p.CallID], toolText(p.Output))}, true
	}
	return nil, false
}

func (r codexReader) TurnRunning() (bool, error) {
	lines, err := newestRecords[codexLine](r.rollouts())
	if err != nil {
		return false, err
	}
	open := map[string]bool{}
	for _, l := range lines {
		if l.Type != "event_msg" {
			continue
		}
		switch l.Payload.Type {
		case "task_started":
			open[l.Payload.TurnID] = true
		case "task_complete", "turn_aborted":
			delete(open, l.Payload.TurnID)
		}
	}
	return len(open) > 0, nil
}

// rollouts lists the rollouts whose session ran in r.w.Worktree, oldest
// first (the file name starts with the session's start time).
func (r codexReader) rollouts() ([]string, error) {
	var files []string
	root := filepath.Join(r.w.Home, ".codex", "sessions")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == root {
				return filepath.SkipAll
			}
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list codex rollouts: %w", err)
	}
	sort.Slice(files, func(i, j int) bool { return filepath.Base(files[i]) < filepath.Base(files[j]) })
	var mine []string
	for _, f := range files {
		head, err := firstJSONLine[codexLine](f)
		if errors.Is(err, io.EOF) {
			continue // created, its header not written yet
		}
		if err != nil {
			return nil, err
		}
		if head.Type == "session_meta" && head.Payload.Cwd == r.w.Worktree {
			mine = append(mine, f)
		}
	}
	return mine, nil
}
