package records

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"
)

// copilot (@github/copilot 1.0.102) appends one event per line to
// ~/.copilot/session-state/<session uuid>/events.jsonl, the session's first
// line a "session.start" naming its working directory (data.context.cwd).
// Observed with the stub model (tests/captures/notes-copilot.md):
//   - a prompt is a "user.message" whose data.content is the text verbatim,
//     written as it is sent; a text queued while busy is written only when
//     the turn ends and it is sent;
//   - each model request is an "assistant.turn_start" .. "assistant.turn_end"
//     pair; an answer calling tools ends its turn_end with another turn_start
//     right after the tools ran, so a turn_end whose last answer called
//     tools leaves the work going;
//   - Ctrl+C (and Escape at a permission dialog) writes turn_end, then
//     "abort" {reason:"user_initiated"}; a double Escape once the answer
//     streams writes "abort" {reason:"user_abort"};
//   - /exit writes "session.shutdown".
func init() { readers["copilot"] = func(w Where) Reader { return copilotReader{w} } }

type copilotReader struct{ w Where }

type copilotEvent struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		Content      string            `json:"content"`
		Message      string            `json:"message"` // session.error
		ToolRequests []json.RawMessage `json:"toolRequests"`
		Context      struct {
			Cwd string `json:"cwd"`
		} `json:"context"`
		// tool.execution_complete
		ToolCallID string `json:"toolCallId"`
		Result     struct {
			Content json.RawMessage `json:"content"`
		} `json:"result"`
	} `json:"data"`
}

// copilotToolRequest is one tool an assistant.message asks for.
type copilotToolRequest struct {
	ID        string          `json:"toolCallId"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func (r copilotReader) UserMessages() ([]string, error) {
	files, err := r.sessions()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		evs, err := readJSONLines[copilotEvent](f)
		if err != nil {
			return nil, err
		}
		for _, ev := range evs {
			if ev.Type == "user.message" {
				out = append(out, ev.Data.Content)
			}
		}
	}
	return out, nil
}

// Entries: every session of the worktree, oldest first. A turn ends
// completed at the turn_end of an answer that called no tools, cancelled at
// an abort, failed at a session.error (written after the turn_end of a
// turn whose model calls failed for good; no agentStop hook fires then).
func (r copilotReader) Entries() ([]Entry, error) {
	files, err := r.sessions()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, f := range files {
		evs, err := readJSONLines[copilotEvent](f)
		if err != nil {
			return nil, err
		}
		tools := map[string]string{} // toolCallId -> tool name
		for i, ev := range evs {
			at := stamp(ev.Timestamp)
			switch ev.Type {
			case "user.message":
				out = append(out, Entry{Kind: EntryUser, Time: at, Text: ev.Data.Content})
			case "assistant.message":
				if ev.Data.Content != "" {
					out = append(out, Entry{Kind: EntryReply, Time: at, Text: ev.Data.Content})
				}
				for _, raw := range ev.Data.ToolRequests {
					var tr copilotToolRequest
					if json.Unmarshal(raw, &tr) == nil {
						tools[tr.ID] = tr.Name
						out = append(out, toolEntry(EntryToolCall, at, tr.Name, toolText(tr.Arguments)))
					}
				}
			case "tool.execution_complete":
				out = append(out, toolEntry(EntryToolResult, at, tools[ev.Data.ToolCallID], toolText(ev.Data.Result.Content)))
			case "abort":
				out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Cancelled})
			case "session.error":
				// A model call that failed for good (the provider refused
				// connections) ends its turn: turn_end, then this, and no
				// agentStop hook.
				out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Failed, Text: ev.Data.Message})
			case "assistant.turn_end":
				aborted := i+1 < len(evs) && evs[i+1].Type == "abort"
				if !aborted && !copilotLastAnswerCalls(evs[:i]) && copilotAnswered(evs[:i]) {
					out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Completed})
				}
			}
		}
	}
	return out, nil
}

// copilotAnswered reports whether the request a turn_end closes produced
// an answer: a turn_end with none before it is a cancelled request's.
func copilotAnswered(evs []copilotEvent) bool {
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Type {
		case "assistant.message":
			return true
		case "assistant.turn_start":
			return false
		}
	}
	return false
}

// TurnRunning reads the newest session's last turn event: a prompt, a
// request under way, a tool running or a turn_end after an answer that
// called tools means work goes on; an abort, a shutdown or a turn_end after
// a plain answer ends it.
func (r copilotReader) TurnRunning() (bool, error) {
	evs, err := newestRecords[copilotEvent](r.sessions())
	if err != nil {
		return false, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Type {
		case "abort", "session.shutdown", "session.error":
			return false, nil
		case "user.message", "assistant.turn_start", "tool.execution_start", "tool.execution_complete", "permission.requested":
			return true, nil
		case "assistant.turn_end":
			return copilotLastAnswerCalls(evs[:i]), nil
		}
	}
	return false, nil
}

// copilotLastAnswerCalls reports whether the last answer before a turn_end
// called tools, so another request follows.
func copilotLastAnswerCalls(evs []copilotEvent) bool {
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Type {
		case "assistant.message":
			return len(evs[i].Data.ToolRequests) > 0
		case "assistant.turn_start", "user.message":
			return false
		}
	}
	return false
}

// CancelledSince: an abort stamped at or after at (copilot's stamps are
// whole milliseconds).
func (r copilotReader) CancelledSince(at time.Time) (bool, error) {
	evs, err := newestRecords[copilotEvent](r.sessions())
	return markedSince(evs, err, at, func(ev copilotEvent) (string, bool) {
		return ev.Timestamp, ev.Type == "abort"
	})
}

// sessions lists the event files of the sessions started in this worktree,
// oldest first: every session of every directory shares one folder, so
// each file's first line (session.start) says whose it is.
func (r copilotReader) sessions() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(r.w.Home, ".copilot", "session-state", "*", "events.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("list copilot sessions: %w", err)
	}
	var mine []string
	for _, f := range files {
		first, err := firstJSONLine[copilotEvent](f)
		if err != nil || first.Type != "session.start" {
			continue
		}
		if filepath.Clean(first.Data.Context.Cwd) == filepath.Clean(r.w.Worktree) {
			mine = append(mine, f)
		}
	}
	return byLastWrite(mine), nil
}
