package fakeframe

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// RecordPrompt writes a line an emulated agent took as a prompt into the
// record the real CLI keeps (the formats harness/records reads), under
// home for an agent running in dir, so fmctl's record-confirmed submit
// works in the fakes as it does with the real CLIs. Slash commands are
// left out: the CLIs run them themselves. An agent without a record
// emulated here records nothing, and a send to it stays unconfirmed, as
// with a CLI whose record fmctl cannot read.
func RecordPrompt(agent, home, dir, text string) error {
	if home == "" || strings.HasPrefix(strings.TrimSpace(text), "/") {
		return nil
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	switch agent {
	case "claude":
		return appendJSON(filepath.Join(home, ".claude", "projects", mangle(dir), "fake-session.jsonl"), nil,
			map[string]any{"type": "user", "sessionId": "fake-session", "cwd": dir, "message": map[string]any{"role": "user", "content": text}})
	case "codex":
		return appendJSON(filepath.Join(home, ".codex", "sessions", "2026", "01", "01", "rollout-2026-01-01T00-00-00-fake.jsonl"),
			map[string]any{"type": "session_meta", "payload": map[string]any{"cwd": dir}},
			map[string]any{"type": "event_msg", "payload": map[string]any{"type": "item_completed",
				"item": map[string]any{"type": "UserMessage", "content": []map[string]any{{"type": "text", "text": text}}}}})
	case "pi":
		return appendJSON(filepath.Join(home, ".pi", "agent", "sessions", "fake", "2026-01-01_fake.jsonl"),
			map[string]any{"type": "session", "cwd": dir},
			map[string]any{"type": "message", "message": map[string]any{"role": "user", "content": text}})
	case "gemini":
		return appendGeminiLog(filepath.Join(home, ".gemini", "tmp", "fake"), dir, text)
	case "opencode":
		return insertOpencodePrompt(filepath.Join(home, ".local", "share", "opencode", "opencode.db"), dir, text)
	}
	return nil
}

// mangle is claude's project directory name for a worktree, written here
// apart from harness/records' reading of it, so a wrong reading there
// fails a test instead of agreeing with itself.
func mangle(dir string) string {
	return strings.Map(func(c rune) rune {
		if c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return c
		}
		return '-'
	}, dir)
}

// appendJSON appends line to a JSONL file, writing head first when the file
// is new.
func appendJSON(path string, head, line any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	if head != nil && os.IsNotExist(statErr) {
		if err := enc.Encode(head); err != nil {
			return err
		}
	}
	return enc.Encode(line)
}

// appendGeminiLog rewrites gemini's logs.json array with one more entry.
func appendGeminiLog(project, dir, text string) error {
	if err := os.MkdirAll(project, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(project, ".project_root"), []byte(dir), 0o644); err != nil {
		return err
	}
	logs := filepath.Join(project, "logs.json")
	var entries []map[string]any
	if data, err := os.ReadFile(logs); err == nil {
		if err := json.Unmarshal(data, &entries); err != nil {
			return fmt.Errorf("read %s: %w", logs, err)
		}
	}
	entries = append(entries, map[string]any{"type": "user", "message": text})
	data, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	return os.WriteFile(logs, data, 0o644)
}

// insertOpencodePrompt adds a user message with one text part to
// opencode's database, through the sqlite3 CLI as fmctl reads it: the
// tables and JSON fields opencode keeps (harness/records/opencode.go), a
// session per directory begun as its first prompt is recorded (after the
// agent's launch, which a reader holds a session to), and an assistant
// message completed at once (the fake's turn ends as it starts).
func insertOpencodePrompt(db, dir, text string) error {
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		return err
	}
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	sid := q("ses-" + mangle(dir))
	script := `CREATE TABLE IF NOT EXISTS session(id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT, time_created INTEGER);
CREATE TABLE IF NOT EXISTS message(id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);
CREATE TABLE IF NOT EXISTS part(id TEXT PRIMARY KEY, message_id TEXT, data TEXT);
INSERT OR IGNORE INTO session VALUES(` + sid + `, NULL, ` + q(dir) + `, CAST(strftime('%s', 'now') AS INTEGER) * 1000);
INSERT INTO message VALUES('msg-' || (SELECT count(*) FROM message), ` + sid + `, (SELECT count(*) FROM message), json_object('role', 'user', 'time', json_object('created', 1)));
INSERT INTO part VALUES('prt-' || (SELECT count(*) FROM part), 'msg-' || (SELECT count(*) - 1 FROM message), json_object('type', 'text', 'text', ` + q(text) + `));
INSERT INTO message VALUES('msg-' || (SELECT count(*) FROM message), ` + sid + `, (SELECT count(*) FROM message), json_object('role', 'assistant', 'time', json_object('created', 1, 'completed', 2)));
`
	cmd := exec.Command("sqlite3", db)
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("sqlite3 %s: %v: %s", db, err, out)
	}
	return nil
}
