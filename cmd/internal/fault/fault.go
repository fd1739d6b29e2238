package fault

import (
	"errors"
	"fmt"
)

// Class is what an error means for the caller's next step. Its value is
// the exit code the binaries document for it (cmd/internal/cli's exit-code
// table names and explains each), so the edge exits with it as it is.
type Class int

// The classes: every error is one of them.
const (
	ClassFailed      Class = 1 // refused or failed; nothing may be assumed done
	ClassUsage       Class = 2 // the command line is wrong; nothing was done
	ClassUnconfirmed Class = 3 // done, but its effect could not be proven
	ClassTimeout     Class = 4 // a wait's condition did not hold in time
	ClassStalled     Class = 5 // a wait saw the agent busy with no progress
)

// String is the class's one word, as scripts, docs and the audit trail
// name it.
func (c Class) String() string {
	switch c {
	case ClassFailed:
		return "failed"
	case ClassUsage:
		return "usage"
	case ClassUnconfirmed:
		return "unconfirmed"
	case ClassTimeout:
		return "timeout"
	case ClassStalled:
		return "stalled"
	}
	return fmt.Sprintf("class-%d", int(c))
}

// Error is a failure the user is told about: its exit class and, under
// --json, its stable code. Msg says what happened, in one short sentence;
// Hints say what to do next. Facts are what a machine reader may want
// beside the sentence (printed in --json output only).
type Error struct {
	Class Class
	Code  Code // empty: decided by CodeOf from the cause and the class
	Msg   string
	Facts []Fact
	// Hints say what to do next: `hint:` lines below the error, "hints"
	// under --json.
	Hints []string
	Err   error // the underlying cause, if any
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// New formats like fmt.Errorf, so a %w cause stays reachable for
// errors.Is (and for CodeOf's kinds).
func New(class Class, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	cause := errors.Unwrap(err)
	if _, multi := err.(interface{ Unwrap() []error }); multi {
		cause = err
	}
	return &Error{Class: class, Msg: err.Error(), Err: cause}
}

// Failed is a refusal or failure.
func Failed(format string, args ...any) *Error {
	return New(ClassFailed, format, args...)
}

// Usage is a command-line error.
func Usage(format string, args ...any) *Error {
	return New(ClassUsage, format, args...)
}

// Unconfirmed is an action whose effect could not be proven.
func Unconfirmed(format string, args ...any) *Error {
	return New(ClassUnconfirmed, format, args...)
}

// Timeout is a wait whose condition did not hold in time.
func Timeout(format string, args ...any) *Error {
	return New(ClassTimeout, format, args...)
}

// Coded names the error's class for machine readers (see codes.go).
func (e *Error) Coded(c Code) *Error {
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
	e.Facts = Append(e.Facts, facts)
	return e
}

// Hint adds a line saying what to do next.
func (e *Error) Hint(format string, args ...any) *Error {
	e.Hints = append(e.Hints, fmt.Sprintf(format, args...))
	return e
}

// Get returns a fact's text value.
func (e *Error) Get(key string) string { return Get(e.Facts, key) }

// ClassOf is the class err maps to: the outermost Error's in its chain,
// else ClassFailed.
func ClassOf(err error) Class {
	var r *Error
	if errors.As(err, &r) {
		return r.Class
	}
	return ClassFailed
}
