package records

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"
)

// qwen (@qwen-code/qwen-code 0.15.10) appends one JSONL record per session
// to ~/.qwen/projects/<worktree as claude names it>/chats/<session id>.jsonl:
// claude's line shape ({"uuid","parentUuid","sessionId","timestamp","type",
// "cwd",...}) carrying gemini's message parts. Observed with the stub model:
//   - a prompt is a "user" line ({"message":{"role":"user","parts":[{"text"}]}})
//     written as its request starts; a text queued while busy is written
//     only when it is sent;
//   - the model's answer is an "assistant" line; one whose parts hold a
//     functionCall leaves the turn going, and each call's outcome comes
//     back as a "tool_result" line (status success, error or cancelled);
//   - a failed or cancelled request is a "system" line, subtype
//     "ui_telemetry", whose uiEvent is "qwen-code.api_error" (Escape:
//     "Request was aborted."); the retries of a 429 or 5xx are not recorded,
//     only their success or the final error;
//   - Escape while the answer streams records neither an api_error nor the
//     answer: the request's "qwen-code.api_response" line is written with
//     no response text and no tokens (the stream ended before its final
//     event, which carries them), and no assistant line follows;
//   - Escape during a tool records the call's tool_result "cancelled"
//     ("[Operation Cancelled] ..."), and no request follows;
//   - slash commands are system lines ("slash_command"), never user lines.
func init() { readers["qwen"] = func(w Where) Reader { return qwenReader{w} } }

type qwenReader struct{ w Where }

type qwenRecord struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	Timestamp string `json:"timestamp"`
	Message   struct {
		Role  string          `json:"role"`
		Parts json.RawMessage `json:"parts"`
	} `json:"message"`
	ToolCallResult struct {
		Status string `json:"status"`
	} `json:"toolCallResult"`
	SystemPayload json.RawMessage `json:"systemPayload"`
}

// qwenAPIError is the ui_telemetry event qwen records when a turn's request
// fails for good or is aborted.
const qwenAPIError = "qwen-code.api_error"

func (r qwenReader) UserMessages() ([]string, error) {
	files, err := r.transcripts()
	return promptsIn(files, err, func(rec qwenRecord) (string, bool) {
		return geminiPromptText(rec.Message.Parts), rec.Type == "user"
	})
}

// Entries: an "assistant" line's parts are the reply's text and its
// functionCalls, and an answer calling no tool ends the turn; a
// "tool_result" line is one call's functionResponse, and a cancelled one
// ends the turn too; a request's final error ends it failed, or cancelled
// when Escape aborted it.
func (r qwenReader) Entries() ([]Entry, error) {
	files, err := r.transcripts()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, f := range files {
		recs, err := readJSONLines[qwenRecord](f)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			out = append(out, rec.entries()...)
		}
	}
	return out, nil
}

// qwenAborted is the api_error type of a request Escape aborted.
const qwenAborted = "APIUserAbortError"

func (rec qwenRecord) entries() []Entry {
	at := stamp(rec.Timestamp)
	switch rec.Type {
	case "user":
		return []Entry{{Kind: EntryUser, Time: at, Text: geminiPromptText(rec.Message.Parts)}}
	case "assistant":
		out := geminiParts(rec.Message.Parts, at)
		if !qwenCallsTools(rec.Message.Parts) {
			out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Completed})
		}
		return out
	case "tool_result":
		out := geminiParts(rec.Message.Parts, at)
		if rec.cancelled() {
			out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Cancelled})
		}
		return out
	case "system":
		if rec.streamCut() {
			return []Entry{{Kind: EntryTurnEnd, Time: at, End: Cancelled}}
		}
		if !rec.apiError() {
			return nil
		}
		var p struct {
			UIEvent struct {
				Message string `json:"error_message"`
				Type    string `json:"error_type"`
			} `json:"uiEvent"`
		}
		json.Unmarshal(rec.SystemPayload, &p)
		end := Entry{Kind: EntryTurnEnd, Time: at, End: Failed, Text: p.UIEvent.Message}
		if p.UIEvent.Type == qwenAborted {
			end.End = Cancelled
		}
		return []Entry{end}
	}
	return nil
}

// TurnRunning reads the newest transcript's last message line: a prompt, a
// tool's result sent back or an answer calling tools means the turn goes
// on; a plain answer, a cancelled tool or a request's final error ends it.
func (r qwenReader) TurnRunning() (bool, error) {
	recs, err := newestRecords[qwenRecord](r.transcripts())
	if err != nil {
		return false, err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		rec := recs[i]
		switch rec.Type {
		case "user":
			return true, nil
		case "tool_result":
			return !rec.cancelled(), nil
		case "assistant":
			return qwenCallsTools(rec.Message.Parts), nil
		case "system":
			if rec.apiError() || rec.streamCut() {
				return false, nil
			}
		}
	}
	return false, nil
}

// CancelledSince: a request aborted (api_error) or a tool cancelled, stamped
// at or after at (qwen's stamps are whole milliseconds).
func (r qwenReader) CancelledSince(at time.Time) (bool, error) {
	recs, err := newestRecords[qwenRecord](r.transcripts())
	return markedSince(recs, err, at, func(rec qwenRecord) (string, bool) {
		return rec.Timestamp, rec.cancelled() || rec.apiError() || rec.streamCut()
	})
}

// cancelled reports a tool_result line of a call Escape cancelled.
func (rec qwenRecord) cancelled() bool {
	return rec.Type == "tool_result" && (rec.ToolCallResult.Status == "cancelled" || geminiCancelledResponses(rec.Message.Parts))
}

// streamCut reports a system line recording a request whose answer
// stream ended before its final event: an api_response with no response
// text and no tokens, which qwen 0.15.10 writes when Escape stops an answer
// as it streams (it records the answer itself only when it is whole). A
// whole answer's api_response carries its text and tokens.
func (rec qwenRecord) streamCut() bool {
	if rec.Type != "system" || rec.Subtype != "ui_telemetry" {
		return false
	}
	var p struct {
		UIEvent struct {
			Name   string  `json:"event.name"`
			Text   string  `json:"response_text"`
			Tokens float64 `json:"total_token_count"`
		} `json:"uiEvent"`
	}
	if json.Unmarshal(rec.SystemPayload, &p) != nil {
		return false
	}
	return p.UIEvent.Name == qwenAPIResponse && p.UIEvent.Text == "" && p.UIEvent.Tokens == 0
}

// qwenAPIResponse is the ui_telemetry event of a request's answer.
const qwenAPIResponse = "qwen-code.api_response"

// apiError reports a system line recording a request's final failure.
func (rec qwenRecord) apiError() bool {
	if rec.Type != "system" || rec.Subtype != "ui_telemetry" {
		return false
	}
	var p struct {
		UIEvent map[string]any `json:"uiEvent"`
	}
	if json.Unmarshal(rec.SystemPayload, &p) != nil {
		return false
	}
	return p.UIEvent["event.name"] == qwenAPIError
}

// qwenCallsTools reports whether an answer's parts call a tool.
func qwenCallsTools(parts json.RawMessage) bool {
	var ps []struct {
		FunctionCall json.RawMessage `json:"functionCall"`
	}
	if json.Unmarshal(parts, &ps) != nil {
		return false
	}
	for _, p := range ps {
		if len(p.FunctionCall) > 0 {
			return true
		}
	}
	return false
}

// transcripts lists this worktree's transcripts, oldest session first.
func (r qwenReader) transcripts() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(r.w.Home, ".qwen", "projects", claudeProjectDir(r.w.Worktree), "chats", "*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("list qwen transcripts: %w", err)
	}
	return byLastWrite(files), nil
}
