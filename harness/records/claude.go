package records

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// claude (@anthropic-ai/claude-code 2.1.197) appends one JSONL transcript per
// session to ~/.claude/projects/<worktree, every character outside
// [A-Za-z0-9] turned into '-'>/<session id>.jsonl. Observed with the stub
// model:
//   - a prompt is a type "user" record whose content is the text as typed
//     (multi-line text keeps its newlines; a large paste, shown collapsed as
//     "[Pasted text #1 +29 lines]", is recorded in full); a message typed
//     while busy is a "queue-operation" until it is sent, then a user record
//     (promptSource "queued");
//   - a turn ends with a system "turn_duration" record (after the 400 too);
//   - Escape on a turn, with an empty composer, puts the prompt back into the
//     composer and records nothing more; the next prompt is written as a
//     sibling of the taken-back one (same parentUuid). The taken-back prompt
//     was still received (the model was asked), so it stays in
//     UserMessages: a prompt submitted again shows up twice, as it was sent
//     twice. With a draft or a queued message waiting, Escape records a user
//     record "[Request interrupted by user]" instead (and sends the queued
//     message);
//   - /nosuchcmd and /help are system records ("informational",
//     "local_command"), never user records;
//   - ~/.claude/sessions/<pid>.json holds the live process's status
//     ("busy"/"idle") and is removed when claude exits.
func init() { readers["claude"] = func(w Where) Reader { return claudeReader{w} } }

type claudeReader struct{ w Where }

type claudeRecord struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	SessionID   string `json:"sessionId"`
	Cwd         string `json:"cwd"`
	Timestamp   string `json:"timestamp"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	IsAPIError  bool   `json:"isApiErrorMessage"`
	// A queue-operation's operation ("enqueue", "dequeue") and its
	// enqueued text; a system record's content (claudeCommand reads a
	// local_command's and an informational's).
	Operation string          `json:"operation"`
	Content   json.RawMessage `json:"content"`
	Message   struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// claudeInterrupted is the text claude records when Escape cuts a turn.
const claudeInterrupted = "[Request interrupted by user"

func (r claudeReader) UserMessages() ([]string, error) {
	sh, err := r.Sheet()
	return sh.Messages, err
}

// Sheet reads every transcript once for the user messages, the commands
// and the queued texts together.
func (r claudeReader) Sheet() (Sheet, error) {
	files, err := r.transcripts()
	if err != nil {
		return Sheet{}, err
	}
	var sh Sheet
	for _, f := range files {
		recs, err := readJSONLines[claudeRecord](f)
		if err != nil {
			return Sheet{}, err
		}
		for _, rec := range recs {
			if text, ok := claudePrompt(rec); ok {
				sh.Messages = append(sh.Messages, text)
			} else if name, ok := claudeCommand(rec); ok {
				sh.Commands = append(sh.Commands, name)
			} else if text, ok := claudeEnqueued(rec); ok {
				sh.Enqueued = append(sh.Enqueued, text)
			}
		}
	}
	return sh, nil
}

// Entries: an assistant record's content holds the reply's text and its
// tool_use parts; a user record holding tool_result parts is the tools'
// output; "turn_duration" ends a turn, failed when the model's call failed
// (claude records that as an assistant text with isApiErrorMessage);
// "[Request interrupted by user" ends it cancelled. An Escape with an empty
// composer records nothing, so such a turn has no end here.
func (r claudeReader) Entries() ([]Entry, error) {
	files, err := r.transcripts()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, f := range files {
		recs, err := readJSONLines[claudeRecord](f)
		if err != nil {
			return nil, err
		}
		failed, tools := "", map[string]string{}
		for _, rec := range recs {
			if rec.IsSidechain {
				continue
			}
			at := stamp(rec.Timestamp)
			if text, ok := claudePrompt(rec); ok {
				out = append(out, Entry{Kind: EntryUser, Time: at, Text: text})
				continue
			}
			switch {
			case rec.Type == "system" && rec.Subtype == "turn_duration":
				end := Entry{Kind: EntryTurnEnd, Time: at, End: Completed}
				if failed != "" {
					end.End, end.Text, failed = Failed, failed, ""
				}
				out = append(out, end)
			case rec.Type == "user" && strings.HasPrefix(piText(rec.Message.Content), claudeInterrupted):
				out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Cancelled})
			case rec.Type == "assistant" && rec.IsAPIError:
				failed = piText(rec.Message.Content)
			case rec.Type == "assistant" || rec.Type == "user" && !rec.IsMeta:
				out = append(out, claudeParts(rec.Type == "assistant", rec.Message.Content, at, tools)...)
			}
		}
	}
	return out, nil
}

// CancelledSince: a "[Request interrupted by user" record stamped at or
// after at (claude's stamps are whole milliseconds). claude writes it when
// Escape cuts a turn that had drawn an answer, or one with a draft or a
// queued message waiting; a turn it takes back into the composer instead
// leaves no mark.
func (r claudeReader) CancelledSince(at time.Time) (bool, error) {
	recs, err := newestRecords[claudeRecord](r.transcripts())
	return markedSince(recs, err, at, func(rec claudeRecord) (string, bool) {
		return rec.Timestamp, !rec.IsSidechain && rec.Type == "user" && strings.HasPrefix(piText(rec.Message.Content), claudeInterrupted)
	})
}

// claudeParts are the entries of one message's content list: the model's
// text and tool calls, and tool results (named through tools, the calls
// seen so far by id). Thinking is not shown, nor a user record's text that
// is no prompt (the output of a command claude ran itself).
func claudeParts(model bool, content json.RawMessage, at time.Time, tools map[string]string) []Entry {
	var parts []struct {
		Type, Text, ID, Name string
		ToolUseID            string          `json:"tool_use_id"`
		Input                json.RawMessage `json:"input"`
		Content              json.RawMessage `json:"content"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return nil
	}
	var out []Entry
	for _, p := range parts {
		switch p.Type {
		case "text":
			if model {
				out = append(out, Entry{Kind: EntryReply, Time: at, Text: p.Text})
			}
		case "tool_use":
			tools[p.ID] = p.Name
			out = append(out, toolEntry(EntryToolCall, at, p.Name, toolText(p.Input)))
		case "tool_result":
			out = append(out, toolEntry(EntryToolResult, at, tools[p.ToolUseID], piText(p.Content)))
		}
	}
	return out
}

// promptsIn reads each transcript in turn (claude's, qwen's: one JSONL file
// per session) and keeps the lines prompt names a user's prompt.
func promptsIn[T any](files []string, err error, prompt func(T) (string, bool)) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		recs, err := readJSONLines[T](f)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			if text, ok := prompt(rec); ok {
				out = append(out, text)
			}
		}
	}
	return out, nil
}

// Commands: each slash command claude took, from its system records: a
// local_command's "<command-name>/help</command-name>" with its
// "<command-args>", and an informational "Unknown command: /nosuchcmd".
func (r claudeReader) Commands() ([]string, error) {
	sh, err := r.Sheet()
	return sh.Commands, err
}

// claudeCommand reads the slash command a record says claude took.
func claudeCommand(rec claudeRecord) (string, bool) {
	var s string
	if rec.Type != "system" || json.Unmarshal(rec.Content, &s) != nil {
		return "", false
	}
	switch rec.Subtype {
	case "informational":
		name, ok := strings.CutPrefix(s, "Unknown command: ")
		return name, ok && strings.HasPrefix(name, "/")
	case "local_command":
		name, ok := between(s, "<command-name>", "</command-name>")
		if !ok || !strings.HasPrefix(name, "/") {
			return "", false
		}
		if args, _ := between(s, "<command-args>", "</command-args>"); args != "" {
			name += " " + args
		}
		return name, true
	}
	return "", false
}

// between is the text of s between the first open and the close after it.
func between(s, open, close string) (string, bool) {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return "", false
	}
	in, _, ok := strings.Cut(rest, close)
	return in, ok
}

// EnqueuedMessages: each queue-operation "enqueue" record's text (2.1.197
// and 2.1.332 write one as they take a text typed during a turn).
func (r claudeReader) EnqueuedMessages() ([]string, error) {
	sh, err := r.Sheet()
	return sh.Enqueued, err
}

// claudeEnqueued reads the text a queue-operation says claude queued.
func claudeEnqueued(rec claudeRecord) (string, bool) {
	var s string
	if rec.Type != "queue-operation" || rec.Operation != "enqueue" || json.Unmarshal(rec.Content, &s) != nil {
		return "", false
	}
	return s, true
}

// TurnRunning needs both of claude's records: the transcript alone cannot
// tell a running turn from one Escape took back into the composer (both end
// in an unanswered prompt), so an open turn counts only while the live
// session file says busy.
func (r claudeReader) TurnRunning() (bool, error) {
	recs, err := newestRecords[claudeRecord](r.transcripts())
	if err != nil {
		return false, err
	}
	open, session := false, ""
	for i := len(recs) - 1; i >= 0; i-- {
		rec := recs[i]
		if rec.IsSidechain {
			continue // a subagent's own records
		}
		if rec.Type == "system" && rec.Subtype == "turn_duration" {
			break
		}
		if rec.Type == "user" && strings.HasPrefix(piText(rec.Message.Content), claudeInterrupted) {
			break
		}
		if _, ok := claudePrompt(rec); ok {
			open, session = true, rec.SessionID
			break
		}
	}
	if !open {
		return false, nil
	}
	status, err := r.sessionStatus(session)
	// "waiting" is a turn held at a dialog (its waitingFor: "permission
	// prompt", "dialog open", ...): still open, and an interrupt there
	// must end it like any other.
	return status == "busy" || status == "waiting", err
}

// sessionStatus reads the status claude keeps for a live session, "" when no
// live claude has that session.
func (r claudeReader) sessionStatus(id string) (string, error) {
	files, err := filepath.Glob(filepath.Join(r.w.Home, ".claude", "sessions", "*.json"))
	if err != nil {
		return "", fmt.Errorf("list claude sessions: %w", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // removed as claude exited
		}
		var s struct{ SessionID, Status string }
		if json.Unmarshal(data, &s) == nil && s.SessionID == id {
			return s.Status, nil
		}
	}
	return "", nil
}

// transcripts lists this worktree's transcripts, oldest session first.
func (r claudeReader) transcripts() ([]string, error) {
	dir := claudeProjectDir(r.w.Worktree)
	long := len(dir) > claudeDirMax
	if long {
		// claude keeps the first 200 characters and appends "-<hash>"
		// (observed for a 221-character worktree); the hash is its own, so
		// match the prefix and check each transcript's cwd instead.
		dir = dir[:claudeDirMax] + "-*"
	}
	files, err := filepath.Glob(filepath.Join(r.w.Home, ".claude", "projects", dir, "*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("list claude transcripts: %w", err)
	}
	if long {
		files, err = r.ranHere(files)
		if err != nil {
			return nil, err
		}
	}
	return byLastWrite(files), nil
}

// byLastWrite orders transcripts named by random session ids (claude's,
// qwen's) by when each was last written: only the live session grows.
func byLastWrite(files []string) []string {
	mod := map[string]int64{}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			mod[f] = fi.ModTime().UnixNano()
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return mod[files[i]] < mod[files[j]] })
	return files
}

// claudeDirMax is the longest project directory name claude writes in full.
const claudeDirMax = 200

// ranHere keeps the transcripts whose first record naming a cwd names the
// worktree.
func (r claudeReader) ranHere(files []string) ([]string, error) {
	var mine []string
	for _, f := range files {
		recs, err := readJSONLines[claudeRecord](f)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			if rec.Cwd != "" {
				if rec.Cwd == r.w.Worktree {
					mine = append(mine, f)
				}
				break
			}
		}
	}
	return mine, nil
}

// claudeProjectDir is claude's directory name for a worktree (observed:
// /tmp/cc/w_t.2 -> -tmp-cc-w-t-2), before the length limit.
func claudeProjectDir(worktree string) string {
	return strings.Map(func(c rune) rune {
		if c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return c
		}
		return '-'
	}, worktree)
}

// claudePrompt reports whether rec is a prompt the user sent, and its text.
// Tool results, interrupt markers and the wrapped output of commands claude
// ran itself are user records too, but not prompts.
func claudePrompt(rec claudeRecord) (string, bool) {
	if rec.Type != "user" || rec.IsMeta || rec.IsSidechain || rec.Message.Role != "user" {
		return "", false
	}
	var s string
	if json.Unmarshal(rec.Message.Content, &s) != nil {
		// A list is a prompt only if it holds text alone (not tool results).
		var parts []struct{ Type string }
		json.Unmarshal(rec.Message.Content, &parts)
		for _, p := range parts {
			if p.Type != "text" {
				return "", false
			}
		}
		if len(parts) == 0 {
			return "", false
		}
		s = piText(rec.Message.Content)
	}
	for _, p := range []string{claudeInterrupted, "<command-name>", "<local-command-", "<command-message>"} {
		if strings.HasPrefix(s, p) {
			return "", false
		}
	}
	return s, true
}
