package records

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// gemini (@google/gemini-cli 0.61.0) keeps two records per project under
// ~/.gemini/tmp/<dir>/, where <dir> is a short name listed in
// ~/.gemini/projects.json and <dir>/.project_root holds the worktree:
//
//   - logs.json, a JSON array of every line the user submitted, in order
//     (slash commands included). It survives exit.
//   - chats/session-<time>-<id>.jsonl, the session recording: a header line
//     {"sessionId","projectHash":sha256(worktree),"startTime",...}, then one
//     line per message ({"id","type":"user"|"gemini"|"error"|"info",
//     "content"}) and {"$set":{...}} patches. gemini deletes this file at exit
//     when the conversation holds nothing resumable, which is every session
//     whose turns all failed or were cancelled (each failure resets the
//     history with a $set) - that is, every session against the stub model.
//
// So user messages come from logs.json, minus the built-in commands gemini
// ran itself; the chat recording answers whether a turn is running while the
// agent lives, and a missing one means none is.
func init() { readers["gemini"] = func(w Where) Reader { return geminiReader{w} } }

type geminiReader struct{ w Where }

// UserMessages: logs.json records a submitted line before gemini decides
// what it is. An unknown "/nosuchcmd" goes to the model and stays; a line
// typed while busy is logged only when it is sent (a slash command typed
// while busy is refused with "Slash commands cannot be queued" and never
// logged).
func (r geminiReader) UserMessages() ([]string, error) {
	entries, err := r.logs()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type == "user" && !geminiBuiltin(e.Message) {
			out = append(out, e.Message)
		}
	}
	return out, nil
}

// geminiLogEntry is one line of logs.json.
type geminiLogEntry struct{ SessionID, Type, Message, Timestamp string }

// logs reads logs.json; none yet is no entries.
func (r geminiReader) logs() ([]geminiLogEntry, error) {
	dir, err := r.projectDir()
	if err != nil || dir == "" {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, "logs.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read gemini logs: %w", err)
	}
	var entries []geminiLogEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		// gemini rewrites the whole array in place; a reader can catch it
		// half written. The caller polls, so report it as unreadable.
		return nil, fmt.Errorf("read gemini logs %s: %w", dir, err)
	}
	return entries, nil
}

// geminiCommands are the top-level built-in slash commands of gemini-cli
// 0.61.0 with their aliases (BuiltinCommandLoader in its bundle); these run
// in the CLI and never reach the model.
var geminiCommands = strings.Fields(`about agents auth bug bug-memory chat clear new
	commands compress summarize compact copy corgi directory dir docs editor
	export-session extensions footer statusline gemma help hooks ide init mcp
	memory model oncall permissions plan policies privacy profile quit exit
	restore resume rewind settings setup-github shortcuts skills stats usage
	tasks bg background terminal-setup theme tools upgrade vim voice`)

func geminiBuiltin(line string) bool {
	if !strings.HasPrefix(line, "/") {
		return false
	}
	word, _, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	for _, c := range geminiCommands {
		if word == c {
			return true
		}
	}
	return false
}

type geminiRecord struct {
	SessionID   string          `json:"sessionId"`
	ProjectHash string          `json:"projectHash"`
	StartTime   string          `json:"startTime"`
	ID          string          `json:"id"`
	Timestamp   string          `json:"timestamp"`
	Type        string          `json:"type"`
	Content     json.RawMessage `json:"content"`
	ToolCalls   json.RawMessage `json:"toolCalls"`
}

// TurnRunning reads the last message line of the newest chat recording: a
// user line (the prompt, recorded as its request starts, or a tool's
// function response) or a model reply that called tools means the turn goes
// on; an error, an info ("Request cancelled.") or a plain reply ends it.
// A tool Escape cancelled is recorded after the info line, as a reply whose
// tool calls are all "cancelled" and a user line of their "[Operation
// Cancelled]" responses, which gemini keeps for the next prompt rather
// than sending: those end the turn too. With model "auto" the prompt is
// recorded only after the router's request, so the seed pins a model.
func (r geminiReader) TurnRunning() (bool, error) {
	lines, err := r.chatLines()
	if err != nil {
		return false, err
	}
	for i := len(lines) - 1; i >= 1; i-- {
		switch l := lines[i]; l.Type {
		case "":
			continue // a $set patch
		case "user":
			if geminiCancelledResponses(l.Content) {
				return false, nil
			}
			over, err := r.cancelledBeforeItsRequest(lines[:i], l)
			return !over, err
		case "gemini":
			return geminiCallsPending(l.ToolCalls), nil
		default:
			if at, ok := l.cancelMark(); ok {
				return r.submittedSince(lines[0].SessionID, at)
			}
			return false, nil
		}
	}
	return false, nil
}

// submittedSince reports whether logs.json holds a prompt of chat session
// sid submitted after at, a cancel the chat ends with: a turn that started
// after it (the queue gemini flushes at the cancel, or a new message),
// which the chat records only once its BeforeAgent hooks return. Until
// then the chat alone would read it as no turn (tier: an interrupt
// --drop-queue read its flushed queue's turn as over, and 5 s later the
// chat showed it running).
func (r geminiReader) submittedSince(sid string, at time.Time) (bool, error) {
	entries, err := r.logs()
	if err != nil || sid == "" {
		return false, err
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.SessionID != sid || e.Type != "user" || geminiBuiltin(e.Message) {
			continue
		}
		stamp, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		return err == nil && stamp.After(at), nil
	}
	return false, nil
}

// geminiRequestCancelled is the info line gemini records when Escape
// cancels a turn.
const geminiRequestCancelled = "Request cancelled."

// cancelledBeforeItsRequest reports whether the prompt line p, the last
// message of the chat, belongs to a turn Escape cancelled before its request
// went out. gemini 0.61 awaits its BeforeAgent hooks without the abort
// signal: Escape while they run records "Request cancelled." at once, and
// the prompt is recorded only when the hooks return, after that info line,
// and then dropped unsent. So a prompt line right after a cancel whose
// submit (logs.json) came before that cancel is a turn that is over; a
// prompt submitted after the cancel is a new turn.
func (r geminiReader) cancelledBeforeItsRequest(before []geminiRecord, p geminiRecord) (bool, error) {
	var prev *geminiRecord
	for i := len(before) - 1; i >= 1 && prev == nil; i-- {
		if before[i].Type != "" {
			prev = &before[i]
		}
	}
	if prev == nil {
		return false, nil
	}
	cancelled, ok := prev.cancelMark()
	if !ok {
		return false, nil
	}
	submitted, ok, err := r.lastSubmit(geminiPromptText(p.Content))
	if err != nil || !ok {
		return false, err
	}
	return submitted.Before(cancelled), nil
}

// CancelledSince: gemini's "Request cancelled." info line, stamped at or
// after at (its stamps are whole milliseconds).
func (r geminiReader) CancelledSince(at time.Time) (bool, error) {
	lines, err := r.chatLines()
	if err != nil {
		return false, err
	}
	at = at.Truncate(time.Millisecond)
	for i := len(lines) - 1; i >= 1; i-- {
		if stamp, ok := lines[i].cancelMark(); ok && !stamp.Before(at) {
			return true, nil
		}
	}
	return false, nil
}

// cancelMark is when l, if it is gemini's cancel info line, was recorded.
func (l geminiRecord) cancelMark() (time.Time, bool) {
	var info string
	if l.Type != "info" || json.Unmarshal(l.Content, &info) != nil || info != geminiRequestCancelled {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, l.Timestamp)
	return at, err == nil
}

// chatLines is the newest chat recording of r's worktree, line by line;
// none when gemini has recorded no chat there.
func (r geminiReader) chatLines() ([]geminiRecord, error) {
	chat, err := r.newestChat()
	if err != nil || chat == "" {
		return nil, err
	}
	return readJSONLines[geminiRecord](chat)
}

// geminiPromptText is the text of a prompt line's first part: what the user
// submitted (a hook's added context comes as later parts).
func geminiPromptText(content json.RawMessage) string {
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &parts) != nil || len(parts) == 0 {
		return ""
	}
	return parts[0].Text
}

// lastSubmit is when text was last submitted, per logs.json.
func (r geminiReader) lastSubmit(text string) (time.Time, bool, error) {
	entries, err := r.logs()
	if err != nil {
		return time.Time{}, false, err
	}
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Type == "user" && entries[i].Message == text {
			at, err := time.Parse(time.RFC3339Nano, entries[i].Timestamp)
			return at, err == nil, nil
		}
	}
	return time.Time{}, false, nil
}

// geminiCancelled starts the error gemini records as the response of a
// tool call the user cancelled.
const geminiCancelled = "[Operation Cancelled]"

// geminiParts are the entries of a message's parts (gemini's, and qwen's
// that carry them): text (not the model's thoughts), function calls and
// function responses.
func geminiParts(raw json.RawMessage, at time.Time) []Entry {
	var parts []struct {
		Text         string `json:"text"`
		Thought      bool   `json:"thought"`
		FunctionCall *struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"functionCall"`
		FunctionResponse *geminiResponse `json:"functionResponse"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var out []Entry
	for _, p := range parts {
		switch {
		case p.FunctionCall != nil:
			out = append(out, toolEntry(EntryToolCall, at, p.FunctionCall.Name, toolText(p.FunctionCall.Args)))
		case p.FunctionResponse != nil:
			out = append(out, p.FunctionResponse.entry(at))
		case p.Text != "" && !p.Thought:
			out = append(out, Entry{Kind: EntryReply, Time: at, Text: p.Text})
		}
	}
	return out
}

// geminiResponse is a tool's function response: its output, or the error
// it ended with.
type geminiResponse struct {
	Name     string `json:"name"`
	Response struct {
		Output json.RawMessage `json:"output"`
		Error  string          `json:"error"`
	} `json:"response"`
}

func (f geminiResponse) entry(at time.Time) Entry {
	text := f.Response.Error
	if text == "" {
		text = toolText(f.Response.Output)
	}
	return toolEntry(EntryToolResult, at, f.Name, text)
}

// geminiCancelledResponses reports whether a user line's content is only
// function responses of cancelled tool calls (gemini 0.61.0, after Escape
// while a shell command ran).
func geminiCancelledResponses(content json.RawMessage) bool {
	var parts []struct {
		FunctionResponse *struct {
			Response struct {
				Error string `json:"error"`
			} `json:"response"`
		} `json:"functionResponse"`
	}
	if json.Unmarshal(content, &parts) != nil || len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		if p.FunctionResponse == nil || !strings.HasPrefix(p.FunctionResponse.Response.Error, geminiCancelled) {
			return false
		}
	}
	return true
}

// geminiCallsPending reports whether a reply's tool calls leave the turn
// going: any call not recorded as cancelled.
func geminiCallsPending(raw json.RawMessage) bool {
	var calls []struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(raw, &calls) != nil {
		return false
	}
	for _, c := range calls {
		if c.Status != "cancelled" {
			return true
		}
	}
	return false
}

// newestChat is the chat recording of r's worktree with the latest start.
func (r geminiReader) newestChat() (string, error) {
	chats, err := r.chats()
	if err != nil || len(chats) == 0 {
		return "", err
	}
	return chats[len(chats)-1], nil
}

// chats lists the chat recordings of r's worktree, oldest start first.
func (r geminiReader) chats() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(r.w.Home, ".gemini", "tmp", "*", "chats", "*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("list gemini chats: %w", err)
	}
	sum := sha256.Sum256([]byte(r.w.Worktree))
	hash := hex.EncodeToString(sum[:])
	start := map[string]string{}
	var mine []string
	for _, f := range files {
		head, err := firstJSONLine[geminiRecord](f)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, io.EOF) {
			continue // deleted at exit after the listing, or not written yet
		}
		if err != nil {
			return nil, err
		}
		if head.ProjectHash == hash {
			mine = append(mine, f)
			start[f] = head.StartTime
		}
	}
	sort.SliceStable(mine, func(i, j int) bool { return start[mine[i]] < start[mine[j]] })
	return mine, nil
}

// projectDir finds ~/.gemini/tmp/<dir> whose .project_root names the
// worktree; "" when gemini has not run there.
func (r geminiReader) projectDir() (string, error) {
	roots, err := filepath.Glob(filepath.Join(r.w.Home, ".gemini", "tmp", "*", ".project_root"))
	if err != nil {
		return "", fmt.Errorf("list gemini projects: %w", err)
	}
	sort.Strings(roots)
	for _, f := range roots {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("read gemini project root: %w", err)
		}
		if strings.TrimSpace(string(b)) == r.w.Worktree {
			return filepath.Dir(f), nil
		}
	}
	return "", nil
}
