package records

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Written is a Reader that can say when the agent last wrote its record,
// from the files' own times, without parsing them: a stat per file, cheap
// enough to ask of every busy agent on every look. fmctl reads a busy agent
// whose record has not changed for long as stalled.
type Written interface {
	// LastWrite is the newest modification time among the record's files;
	// zero, with no error, when the agent has written none yet.
	LastWrite() (time.Time, error)
}

// lastWrite is the newest modification time among files. A file removed
// since it was listed (a session file at exit) is skipped.
func lastWrite(files []string, err error) (time.Time, error) {
	if err != nil {
		return time.Time{}, err
	}
	var newest time.Time
	for _, f := range files {
		fi, err := os.Stat(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("stat record %s: %w", f, err)
		}
		if fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return newest, nil
}

func (r claudeReader) LastWrite() (time.Time, error)  { return lastWrite(r.transcripts()) }
func (r codexReader) LastWrite() (time.Time, error)   { return lastWrite(r.rollouts()) }
func (r copilotReader) LastWrite() (time.Time, error) { return lastWrite(r.sessions()) }
func (r qwenReader) LastWrite() (time.Time, error)    { return lastWrite(r.transcripts()) }

// LastWrite: pi's session files are found by their header, so each is read
// once to be named (as every other read of pi's record does).
func (r piReader) LastWrite() (time.Time, error) { return lastWrite(r.sessions()) }

// LastWrite: the chat recordings, where the conversation is written (the
// answer's line rewritten as it streams), and logs.json, where a prompt is.
func (r geminiReader) LastWrite() (time.Time, error) {
	files, err := r.chats()
	if err != nil {
		return time.Time{}, err
	}
	dir, err := r.projectDir()
	if dir != "" {
		files = append(files, filepath.Join(dir, "logs.json"))
	}
	return lastWrite(files, err)
}

// LastWrite: opencode's databases run in WAL mode, so a write lands in the
// -wal file first and reaches the database file only at a checkpoint. Every
// opencode session under this HOME shares them, so another one's write there
// reads as progress too: never a stall claimed falsely, at worst one missed.
// kilo's are its own app's (kilo*.db*): reading opencode's there found no
// file, so a hung kilo turn was never called stalled (the tier's
// hang-stalled).
func (r opencodeReader) LastWrite() (time.Time, error) {
	dbs, err := filepath.Glob(filepath.Join(r.w.Home, ".local", "share", r.app, r.app+"*.db*"))
	if err != nil {
		return time.Time{}, fmt.Errorf("list %s databases: %w", r.app, err)
	}
	return lastWrite(dbs, nil)
}

// LastWrite: cline rewrites a session's <id>.json when its status changes
// (a turn's start, a permission dialog, its end) and writes
// <id>.messages.json when a turn ends; whether it writes either while a
// long turn streams was not observed, so a stall of a cline with no
// telemetry rests on these alone.
func (r clineReader) LastWrite() (time.Time, error) {
	sessions, err := r.sessions()
	var files []string
	for _, s := range sessions {
		files = append(files, filepath.Join(s.dir, s.SessionID+".json"), filepath.Join(s.dir, s.SessionID+".messages.json"))
	}
	return lastWrite(files, err)
}
