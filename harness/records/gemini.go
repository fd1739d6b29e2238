package records

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
	var entries []struct{ Type, Message string }
	if err := json.Unmarshal(data, &entries); err != nil {
		// gemini rewrites the whole array in place; a reader can catch it
		// half written. The caller polls, so report it as unreadable.
		return nil, fmt.Errorf("read gemini logs %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if e.Type == "user" && !geminiBuiltin(e.Message) {
			out = append(out, e.Message)
		}
	}
	return out, nil
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
	chat, err := r.newestChat()
	if err != nil || chat == "" {
		return false, err
	}
	lines, err := readJSONLines[geminiRecord](chat)
	if err != nil {
		return false, err
	}
	for i := len(lines) - 1; i >= 1; i-- {
		switch l := lines[i]; l.Type {
		case "":
			continue // a $set patch
		case "user":
			return !geminiCancelledResponses(l.Content), nil
		case "gemini":
			return geminiCallsPending(l.ToolCalls), nil
		default:
			return false, nil
		}
	}
	return false, nil
}

// geminiCancelled starts the error gemini records as the response of a
// tool call the user cancelled.
const geminiCancelled = "[Operation Cancelled]"

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
	files, err := filepath.Glob(filepath.Join(r.w.Home, ".gemini", "tmp", "*", "chats", "*.jsonl"))
	if err != nil {
		return "", fmt.Errorf("list gemini chats: %w", err)
	}
	sum := sha256.Sum256([]byte(r.w.Worktree))
	hash := hex.EncodeToString(sum[:])
	newest, start := "", ""
	for _, f := range files {
		head, err := readJSONLines[geminiRecord](f)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted at exit between the listing and the read
		}
		if err != nil {
			return "", err
		}
		if len(head) > 0 && head[0].ProjectHash == hash && head[0].StartTime >= start {
			newest, start = f, head[0].StartTime
		}
	}
	return newest, nil
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
