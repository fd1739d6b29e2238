package fakeframe

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// A test makes an emulated agent's turns outlive interrupt keys with a file
// turn-hangs in the fake's state directory: a number N (the turn survives N
// interrupt keys and ends with the next), or "never". Each prompt the agent
// takes then starts a turn its record shows running (HangTurn), and each
// interrupt key counts down (InterruptTurn) until the record shows it ended,
// as the real CLIs' records do: claude's live session status and its
// "[Request interrupted by user]" marker, opencode's assistant message
// without, then with, time.completed. Only claude and opencode are
// emulated; other agents' turns end as they start.

const (
	hangFile     = "turn-hangs"
	survivesFile = "turn-survives"
)

// HangTurn starts a running turn in agent's record for the prompt just
// recorded, when dir holds turn-hangs.
func HangTurn(dir, agent, home, cwd string) error {
	hang, err := os.ReadFile(filepath.Join(dir, hangFile))
	if err != nil || home == "" {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, survivesFile), hang, 0o644); err != nil {
		return err
	}
	return setTurn(agent, home, cwd, true)
}

// InterruptTurn is one interrupt key reaching agent: the running turn ends
// once it has survived its count.
func InterruptTurn(dir, agent, home, cwd string) error {
	path := filepath.Join(dir, survivesFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil // no hanging turn: the turn ended as it started
	}
	left := strings.TrimSpace(string(data))
	if left == "never" {
		return nil
	}
	n, err := strconv.Atoi(left)
	if err != nil {
		return fmt.Errorf("%s: %q is neither a count nor never", path, left)
	}
	if n > 0 {
		return os.WriteFile(path, []byte(strconv.Itoa(n-1)), 0o644)
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	return setTurn(agent, home, cwd, false)
}

func setTurn(agent, home, dir string, running bool) error {
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	switch agent {
	case "claude":
		return setClaudeTurn(home, dir, running)
	case "opencode":
		return setOpencodeTurn(filepath.Join(home, ".local", "share", "opencode", "opencode.db"), running)
	}
	return nil
}

// setClaudeTurn writes the live session's status claude keeps in
// ~/.claude/sessions/<pid>.json; a cancelled turn also gets the marker
// claude records in the transcript.
func setClaudeTurn(home, dir string, running bool) error {
	status := "idle"
	if running {
		status = "busy"
	} else if err := appendJSON(filepath.Join(home, ".claude", "projects", mangle(dir), "fake-session.jsonl"), nil,
		map[string]any{"type": "user", "sessionId": "fake-session", "cwd": dir, "message": map[string]any{"role": "user", "content": "[Request interrupted by user]"}}); err != nil {
		return err
	}
	sessions := filepath.Join(home, ".claude", "sessions")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(map[string]any{"sessionId": "fake-session", "cwd": dir, "status": status})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(sessions, "4242.json"), data, 0o644)
}

// setOpencodeTurn takes back, or sets, the newest assistant message's
// time.completed.
func setOpencodeTurn(db string, running bool) error {
	set := "json_set(data, '$.time.completed', 3)"
	if running {
		set = "json_remove(data, '$.time.completed')"
	}
	script := `UPDATE message SET data = ` + set + ` WHERE id = (SELECT id FROM message WHERE json_extract(data, '$.role') = 'assistant' ORDER BY time_created DESC, id DESC LIMIT 1);`
	cmd := exec.Command("sqlite3", db)
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("sqlite3 %s: %v: %s", db, err, out)
	}
	return nil
}
