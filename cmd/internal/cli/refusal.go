// Package refusal carries a user-facing failure and the exit code it maps to,
// so a binary's main prints one `error: <sentence>` line and exits with it.
package cli

import (
	"errors"
	"fmt"
)

// Error is a refusal with its exit code and, under --json, its stable
// error code. Facts are what a machine reader may want beside the sentence
// (printed in --json output only).
type Error struct {
	Exit  int
	Code  ErrCode // empty: decided by CodeOf from the cause and the exit code
	Msg   string
	Facts []Fact
	// Hints say what to do next: `hint:` lines below the error, "hints"
	// under --json.
	Hints []string
	Err   error // the underlying cause, if any
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// newError formats like fmt.Errorf, so a %w cause stays reachable for
// errors.Is (and for CodeOf's kinds).
func newError(exit int, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	cause := errors.Unwrap(err)
	if _, multi := err.(interface{ Unwrap() []error }); multi {
		cause = err
	}
	return &Error{Exit: exit, Msg: err.Error(), Err: cause}
}

// Failed is a refusal or failure (exit 1).
func Failed(format string, args ...any) *Error {
	return newError(CodeFailed, format, args...)
}

// Usage is a command-line error (exit 2).
func Usage(format string, args ...any) *Error {
	return newError(CodeUsage, format, args...)
}

// Unconfirmed is a delivery whose success could not be proven (exit 3).
func Unconfirmed(format string, args ...any) *Error {
	return newError(CodeUnconfirmed, format, args...)
}

// Timeout is a wait whose condition did not hold in time (exit 4).
func Timeout(format string, args ...any) *Error {
	return newError(CodeTimeout, format, args...)
}

// Coded names the refusal's class for machine readers (see codes.go).
func (e *Error) Coded(c ErrCode) *Error {
	e.Code = c
	return e
}

// With attaches string facts for machine output, as key, value pairs.
func (e *Error) With(kv ...string) *Error {
	for i := 0; i+1 < len(kv); i += 2 {
		e.Put(Str(kv[i], kv[i+1]))
	}
	return e
}

// Put attaches typed facts. A fact may not take the key of the error
// object's own fields (error, code, exit) nor an outcome's word: it panics.
func (e *Error) Put(facts ...Fact) *Error {
	e.Facts = appendFacts(e.Facts, facts)
	return e
}

// Hint adds a line saying what to do next.
func (e *Error) Hint(format string, args ...any) *Error {
	e.Hints = append(e.Hints, fmt.Sprintf(format, args...))
	return e
}

// Get returns a fact's text value.
func (e *Error) Get(key string) string {
	for _, f := range e.Facts {
		if f.Key == key {
			return f.Text
		}
	}
	return ""
}

// Code returns the exit code an error maps to: a refusal's own code, else 1.
func Code(err error) int {
	if err == nil {
		return 0
	}
	var r *Error
	if errors.As(err, &r) {
		return r.Exit
	}
	return CodeFailed
}

// Relayed is an outcome another host's fmctl printed, copied through
// already: Run exits with its code and prints nothing more.
type Relayed struct{ Exit int }

func (r *Relayed) Error() string { return fmt.Sprintf("relayed exit %d", r.Exit) }
