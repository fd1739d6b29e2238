package records

import (
	"encoding/json"
	"time"
)

// Entries joins gemini's two records: the user's messages from logs.json
// (as UserMessages has them, since the chat recording is deleted at exit
// when nothing in it is resumable), and the rest from the chat recordings,
// each in its own order, merged by time. In a chat, a "gemini" line is the
// reply's text and its tool calls, each with its result once it has one;
// "Request cancelled." ends a turn cancelled and an "error" line failed. A
// reply calling no tool ends its turn, which the chat shows only by what
// follows it (a line is rewritten as the answer streams in): the next
// prompt, or a later session.
func (r geminiReader) Entries() ([]Entry, error) {
	logs, err := r.logs()
	if err != nil {
		return nil, err
	}
	var users []Entry
	for _, e := range logs {
		if e.Type == "user" && !geminiBuiltin(e.Message) {
			users = append(users, Entry{Kind: EntryUser, Time: stamp(e.Timestamp), Text: e.Message})
		}
	}
	chats, err := r.chats()
	if err != nil {
		return nil, err
	}
	var rest []Entry
	for i, c := range chats {
		lines, err := readJSONLines[geminiRecord](c)
		if err != nil {
			return nil, err
		}
		rest = append(rest, geminiChatEntries(geminiMessages(lines), i < len(chats)-1)...)
	}
	return mergeByTime(users, rest), nil
}

// geminiMessages are a chat's message lines, each in its latest version at
// the place it first appeared: gemini appends a message again as it
// changes (a reply as it streams, a tool call as it runs).
func geminiMessages(lines []geminiRecord) []geminiRecord {
	var out []geminiRecord
	at := map[string]int{}
	for i, l := range lines {
		if i == 0 || l.Type == "" {
			continue // the header, a $set patch
		}
		if j, ok := at[l.ID]; ok && l.ID != "" {
			out[j] = l
			continue
		}
		at[l.ID] = len(out)
		out = append(out, l)
	}
	return out
}

// geminiChatEntries reads one chat's messages; over says the session has
// ended (a later one exists), so a last reply calling no tool ended its turn.
func geminiChatEntries(msgs []geminiRecord, over bool) []Entry {
	var out []Entry
	// answered is when the last reply calling no tool was written, while
	// its turn has no end yet: the turn ended then, as what follows shows.
	var answered time.Time
	endAnswered := func() {
		if !answered.IsZero() {
			out = append(out, Entry{Kind: EntryTurnEnd, Time: answered, End: Completed})
			answered = time.Time{}
		}
	}
	for _, m := range msgs {
		at := stamp(m.Timestamp)
		switch m.Type {
		case "user":
			if geminiPromptText(m.Content) != "" {
				endAnswered() // the next prompt: the answer before it was the turn's last
			}
		case "gemini":
			out = append(out, geminiReply(m, at)...)
			answered = time.Time{}
			if !geminiCallsPending(m.ToolCalls) && !at.IsZero() {
				answered = at
			}
		case "info":
			if _, ok := m.cancelMark(); ok {
				answered = time.Time{}
				out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Cancelled})
			}
		case "error":
			answered = time.Time{}
			out = append(out, Entry{Kind: EntryTurnEnd, Time: at, End: Failed, Text: geminiContentText(m.Content)})
		}
	}
	if over {
		endAnswered()
	}
	return out
}

// geminiReply is a "gemini" line: its text, then each tool call with its
// result where it has one.
func geminiReply(m geminiRecord, at time.Time) []Entry {
	var out []Entry
	if text := geminiContentText(m.Content); text != "" {
		out = append(out, Entry{Kind: EntryReply, Time: at, Text: text})
	}
	var calls []struct {
		Name      string          `json:"name"`
		Args      json.RawMessage `json:"args"`
		Timestamp string          `json:"timestamp"`
		Result    []struct {
			FunctionResponse *geminiResponse `json:"functionResponse"`
		} `json:"result"`
	}
	json.Unmarshal(m.ToolCalls, &calls)
	for _, c := range calls {
		out = append(out, toolEntry(EntryToolCall, at, c.Name, toolText(c.Args)))
		for _, res := range c.Result {
			if res.FunctionResponse != nil {
				when := stamp(c.Timestamp)
				if when.IsZero() {
					when = at
				}
				out = append(out, res.FunctionResponse.entry(when))
			}
		}
	}
	return out
}

// geminiContentText is a chat line's content as text: a string, or the
// text of its parts.
func geminiContentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b []byte
	for _, e := range geminiParts(raw, time.Time{}) {
		if e.Kind == EntryReply {
			b = append(b, e.Text...)
		}
	}
	return string(b)
}

// mergeByTime merges two lists, each already in its record's order, by
// time; an entry without one keeps its place after what precedes it.
func mergeByTime(a, b []Entry) []Entry {
	out := make([]Entry, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if !b[0].Time.IsZero() && !a[0].Time.IsZero() && b[0].Time.Before(a[0].Time) {
			out, b = append(out, b[0]), b[1:]
			continue
		}
		out, a = append(out, a[0]), a[1:]
	}
	return append(append(out, a...), b...)
}
