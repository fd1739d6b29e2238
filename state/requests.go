package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"fmctl/phrase"
)

// RequestLog remembers, by request id, the outcome of each mutating
// request a host's fmctl ran for another machine (state/requests/<id>), so
// a request retried after a lost answer is answered from memory and never
// types a message or stops an agent twice.
type RequestLog struct {
	Dir string
	// Keep bounds the log: outcomes older than it go, and past MaxKept
	// the oldest go first.
	Keep    time.Duration
	MaxKept int
}

// Requests is the home's request log, with its default bounds: a day, and
// 1024 outcomes.
func (s Store) Requests() RequestLog {
	return RequestLog{Dir: filepath.Join(s.Dir, "requests"), Keep: 24 * time.Hour, MaxKept: 1024}
}

// ValidRequestID reports whether id may name a request: 8 to 64 letters,
// digits, '-' and '_'; it becomes a file name.
func ValidRequestID(id string) bool {
	if len(id) < 8 || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

func (l RequestLog) outcomePath(id string) string { return filepath.Join(l.Dir, id+".outcome") }
func (l RequestLog) lockPath(id string) string    { return filepath.Join(l.Dir, "."+id+".lock") }

// Claim takes request id's lock, waiting up to wait for a copy of the same
// request still running, and returns the outcome remembered for it, or nil
// when it never ran: then the caller runs it, Remembers the outcome and
// releases the lock.
func (l RequestLog) Claim(id string, wait time.Duration) (*Lock, []byte, error) {
	if !ValidRequestID(id) {
		return nil, nil, fmt.Errorf("request id '%s' is not 8 to 64 letters, digits, '-' or '_'", phrase.Printable(id))
	}
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("make request log %s: %w", l.Dir, err)
	}
	lock, err := WaitLock(l.lockPath(id), wait)
	if err != nil {
		return nil, nil, fmt.Errorf("request %s: %w", id, err)
	}
	data, err := ReadSmallFile(l.outcomePath(id), 64<<20)
	switch {
	case err == nil:
		return lock, data, nil
	case errors.Is(err, fs.ErrNotExist):
		return lock, nil, nil
	}
	lock.Release()
	return nil, nil, fmt.Errorf("read request %s's outcome: %w", id, err)
}

// Remember records request id's outcome, atomically, then drops what is
// past the log's bounds.
func (l RequestLog) Remember(id string, outcome []byte) error {
	if err := WriteSecret(l.outcomePath(id), outcome); err != nil {
		return fmt.Errorf("remember request %s: %w", id, err)
	}
	l.prune(time.Now())
	return nil
}

// prune removes outcomes (and their locks) older than Keep, then the oldest
// past MaxKept. Best effort: a file it cannot remove is tried next time.
func (l RequestLog) prune(now time.Time) {
	entries, err := os.ReadDir(l.Dir)
	if err != nil {
		return
	}
	type kept struct {
		id  string
		mod time.Time
	}
	var outcomes []kept
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".outcome")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil {
			outcomes = append(outcomes, kept{id, info.ModTime()})
		}
	}
	sort.Slice(outcomes, func(i, j int) bool { return outcomes[i].mod.After(outcomes[j].mod) })
	for i, o := range outcomes {
		if i >= l.MaxKept || now.Sub(o.mod) > l.Keep {
			_ = RemoveIfExists(l.outcomePath(o.id))
			_ = RemoveIfExists(l.lockPath(o.id))
		}
	}
}
