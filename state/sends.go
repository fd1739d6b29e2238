package state

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Send is one fm-send to an agent whose own record fmctl reads: kept so
// `fm-control wait --for submitted` can tell later whether an unconfirmed
// one arrived, and `fm-control read --record` names each message by its id
// (the digest and the copies before it find it in the record).
type Send struct {
	MessageID string `json:"message"`
	At        int64  `json:"at"`     // unix seconds of the send
	Digest    string `json:"digest"` // of the text as sent; the text itself is not kept
	Before    int    `json:"before"` // exact copies the record held before the send
	Harness   string `json:"harness"`
	Verdict   string `json:"verdict"` // what fm-send reported: queued, unrecorded, ...
	// Gen is the record's spawn_gen at the send: the agent it went to. A
	// message queued to an agent goes with it when it is stopped, and is
	// no message a relaunched one left queued ("" in a ledger written
	// before it was kept).
	Gen string `json:"gen,omitempty"`
	// Length and LogBefore, for an agent that logs each prompt it takes
	// by length (cline): the text's length in UTF-16 units, and what the
	// log held of that length before the send.
	Length    int      `json:"length,omitempty"`
	LogBefore LogTally `json:"log_before,omitzero"`
}

// LogTally counts the prompts of one length an agent logged taking: Fresh
// started a turn at once, Queued were held behind one. (A ledger written
// before the queue's fates were read also kept "sent", which is ignored.)
type LogTally struct {
	Fresh  int `json:"fresh,omitempty"`
	Queued int `json:"queued,omitempty"`
}

// maxSends bounds a task's send ledger: only recent sends are waited for,
// and read --record names the messages of about a day's work.
const maxSends = 256

// SendsPath is the task's ledger of sends.
func (s Store) SendsPath(id string) string { return filepath.Join(s.Dir, id+".sends") }

// NewMessageID names one fm-send in its outcome, so a caller can wait for
// that very message later.
func NewMessageID(at time.Time) (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random bytes for a message id: %w", err)
	}
	return fmt.Sprintf("m%s-%s", at.UTC().Format("20060102T150405"), hex.EncodeToString(b)), nil
}

// ValidMessageID reports whether m has the shape NewMessageID gives.
func ValidMessageID(m string) bool {
	if len(m) != 1+15+1+8 || m[0] != 'm' || m[16] != '-' {
		return false
	}
	for i, c := range m[1:] {
		if i == 15 {
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == 'T') {
			return false
		}
	}
	return true
}

// VerdictUntaken is a send's verdict once an interrupt found the agent
// had let it go: idle, its queue emptied, the text never in its record.
// No later look waits for it.
const VerdictUntaken = "untaken"

// AddSend appends one send to the task's ledger, keeping the newest
// maxSends. The caller holds the task's input lock, the ledger's only
// writer.
func (s Store) AddSend(id string, send Send) error {
	sends, err := s.Sends(id)
	if err != nil {
		return err
	}
	sends = append(sends, send)
	if len(sends) > maxSends {
		sends = sends[len(sends)-maxSends:]
	}
	if err := s.writeSends(id, sends); err != nil {
		return fmt.Errorf("record send %s of task %s: %w", send.MessageID, id, err)
	}
	return nil
}

// MarkSends sets the verdict of the ledger's messages named by ids. The
// caller holds the task's input lock, as AddSend's does.
func (s Store) MarkSends(id string, ids []string, verdict string) error {
	sends, err := s.Sends(id)
	if err != nil {
		return err
	}
	for i := range sends {
		if slices.Contains(ids, sends[i].MessageID) {
			sends[i].Verdict = verdict
		}
	}
	if err := s.writeSends(id, sends); err != nil {
		return fmt.Errorf("mark sends %s of task %s %s: %w", strings.Join(ids, ","), id, verdict, err)
	}
	return nil
}

// writeSends replaces the task's ledger with sends, atomically.
func (s Store) writeSends(id string, sends []Send) error {
	var buf bytes.Buffer
	for _, e := range sends {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode send %s: %w", e.MessageID, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return WriteAtomic(s.SendsPath(id), buf.Bytes())
}

// Sends reads the task's ledger, oldest first; none yet is an empty one.
func (s Store) Sends(id string) ([]Send, error) {
	data, err := ReadSmallFile(s.SendsPath(id), 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sends of task %s: %w", id, err)
	}
	var out []Send
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var e Send
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.MessageID != "" {
			out = append(out, e)
		}
	}
	return out, nil
}

// FindSend looks up one message id in the task's ledger.
func (s Store) FindSend(id, messageID string) (Send, bool, error) {
	sends, err := s.Sends(id)
	if err != nil {
		return Send{}, false, err
	}
	for i := len(sends) - 1; i >= 0; i-- {
		if sends[i].MessageID == messageID {
			return sends[i], true, nil
		}
	}
	return Send{}, false, nil
}
