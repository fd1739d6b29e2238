package state

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The submit stamp: state/<id>.submitted holds when text was last about to
// be submitted to the task's agent (an fm-send, or a launch line carrying
// the launch prompt), as unix nanoseconds. An interrupt reads it to tell an
// idle agent from one whose turn may be starting: some agents log a prompt
// well before their record shows its turn (gemini records the turn only
// as the request goes out), and keys that land before the turn cancel
// nothing. Without a recent submit there is no such turn to wait for.

// SubmittedPath is where the task's submit stamp lives.
func (s Store) SubmittedPath(id string) string { return filepath.Join(s.Dir, id+".submitted") }

// StampSubmitted records that text is submitted to task id's agent at at.
func (s Store) StampSubmitted(id string, at time.Time) error {
	if err := WriteAtomic(s.SubmittedPath(id), []byte(strconv.FormatInt(at.UnixNano(), 10)+"\n")); err != nil {
		return fmt.Errorf("stamp the submit to %s: %w", id, err)
	}
	return nil
}

// LastSubmitted is the newest submit stamp of task id; ok is false when
// there is none or it cannot be read.
func (s Store) LastSubmitted(id string) (at time.Time, ok bool) {
	data, err := ReadSmallFile(s.SubmittedPath(id), 64)
	if err != nil {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}
