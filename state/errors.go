package state

import (
	"errors"
	"fmt"
)

// Kinds of failure a caller tells apart with errors.Is. The CLI maps each to
// its stable error code; the sentence a user reads is the error's own text.
var (
	ErrBadTaskID       = errors.New("invalid task id")
	ErrNoSuchTask      = errors.New("no such task")
	ErrBadRecord       = errors.New("unusable task record")
	ErrForeignEndpoint = errors.New("endpoint owned by another task")
	// ErrLockHeld: another holder kept a lock past the wait (as opposed
	// to a lock file that cannot be opened at all).
	ErrLockHeld     = errors.New("lock still held")
	ErrTornRelaunch = errors.New("torn relaunch")
)

// KindError is an error of a known kind: its text is the full sentence, and
// errors.Is matches both the kind and any cause wrapped with %w.
type KindError struct {
	Kind error
	Err  error
}

func (e *KindError) Error() string   { return e.Err.Error() }
func (e *KindError) Unwrap() []error { return []error{e.Kind, e.Err} }

// Errorf builds an error of kind from a sentence; %w in format keeps a cause.
func Errorf(kind error, format string, args ...any) error {
	return &KindError{Kind: kind, Err: fmt.Errorf(format, args...)}
}

// SpawnFlags are what a hint's fm-spawn <id> needs to start a task: the
// harness, the repository its worktree is added to, and the brief (each
// may be left out only where a default stands in, which a hint cannot
// know). Placeholders are written <word>, as in every hint.
const SpawnFlags = "--harness <harness> --project <repo> --brief <file>"

// HintedError is an error with what the user may do next, kept apart
// from the sentence so the CLI prints each on its own hint line.
type HintedError struct {
	Err  error
	Next []string
}

func (e *HintedError) Error() string   { return e.Err.Error() }
func (e *HintedError) Unwrap() error   { return e.Err }
func (e *HintedError) Hints() []string { return e.Next }

// WithHints attaches next steps to err (nil stays nil).
func WithHints(err error, next ...string) error {
	if err == nil {
		return nil
	}
	return &HintedError{Err: err, Next: next}
}
