package state

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// An event key is a per-launch secret that `fm-control agent-event` must be
// shown before it records what an agent says about itself. fm-spawn mints
// one for every incarnation (state/<id>.event-key, mode 0600, outside the
// record and the worktree) and the launch line hands it to the agent's
// environment, which the harness's hooks inherit. The record's spawn_gen is
// readable by every agent, so without the key any agent that copied a hook's
// command line could report for another task.

// eventKeyBytes is 256 bits.
const eventKeyBytes = 32

// maxRefusedLog bounds the refused-event log: a looping caller must not
// fill the disk, and a count this high already says all there is to say.
const maxRefusedLog = 256 << 10

// EventKeyPath is where the task's current event key lives.
func (s Store) EventKeyPath(id string) string { return filepath.Join(s.Dir, id+".event-key") }

// EventRefusedPath is the log of agent-event calls refused for want of the
// key, one line each.
func (s Store) EventRefusedPath(id string) string {
	return filepath.Join(s.Dir, id+".event-refused")
}

// NewEventKey returns a fresh key, hex-encoded.
func NewEventKey() (string, error) {
	b := make([]byte, eventKeyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read %d random bytes for an event key: %w", eventKeyBytes, err)
	}
	return hex.EncodeToString(b), nil
}

// WriteEventKey publishes the key of the incarnation about to launch,
// replacing (rotating) the previous one.
func (s Store) WriteEventKey(id, key string) error {
	return WriteSecret(s.EventKeyPath(id), []byte(key))
}

// CheckEventKey reports whether presented is the task's current key. A task
// without a key file (spawned before keys, or its file removed) matches
// nothing.
func (s Store) CheckEventKey(id, presented string) (bool, error) {
	want, err := s.readEventKey(id)
	if err != nil {
		return false, err
	}
	return eventKeyRefusal(want, presented) == "", nil
}

// readEventKey is the task's current key, as its file holds it.
func (s Store) readEventKey(id string) ([]byte, error) {
	want, err := ReadSmallFile(s.EventKeyPath(id), 4096)
	return bytes.TrimSpace(want), err
}

// eventKeyRefusal is why presented is not the key want, in the refused-event
// log's words, or "" when it is.
func eventKeyRefusal(want []byte, presented string) string {
	switch {
	case len(want) == 0:
		return "no-key-file"
	case presented == "":
		return "no-key"
	case subtle.ConstantTimeCompare(want, []byte(presented)) != 1:
		return "wrong-key"
	}
	return ""
}

// CountRefusedEvent appends one line to the refused-event log, never
// through a symlink; past maxRefusedLog the count stops growing.
func (s Store) CountRefusedEvent(id string, at time.Time, detail string) error {
	p := s.EventRefusedPath(id)
	if info, err := os.Lstat(p); err == nil && info.Size() >= maxRefusedLog {
		return nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	_, werr := fmt.Fprintf(f, "%s %s\n", at.UTC().Format(time.RFC3339Nano), detail)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("append to %s: %w", p, werr)
	}
	return nil
}

// RefusedEvents counts the refused-event log's lines; 0 without one.
func (s Store) RefusedEvents(id string) int {
	data, err := ReadSmallFile(s.EventRefusedPath(id), maxRefusedLog+4096)
	if err != nil {
		return 0
	}
	return bytes.Count(data, []byte("\n"))
}
