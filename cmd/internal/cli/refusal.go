// Package refusal carries a user-facing failure and the exit code it maps to,
// so a binary's main prints one `error: <sentence>` line and exits with it.
package cli

import (
	"errors"
	"fmt"
)

// Error is a refusal with its exit code. Facts are key=value tokens a machine
// reader may want (they are printed in --json output).
type Error struct {
	Code  int
	Msg   string
	Facts map[string]string
	Err   error // the underlying cause, if any
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Failed is a refusal or failure (exit 1).
func Failed(format string, args ...any) *Error {
	return &Error{Code: CodeFailed, Msg: fmt.Sprintf(format, args...)}
}

// Usage is a command-line error (exit 2).
func Usage(format string, args ...any) *Error {
	return &Error{Code: CodeUsage, Msg: fmt.Sprintf(format, args...)}
}

// Unconfirmed is a delivery whose success could not be proven (exit 3).
func Unconfirmed(format string, args ...any) *Error {
	return &Error{Code: CodeUnconfirmed, Msg: fmt.Sprintf(format, args...)}
}

// Timeout is a wait whose condition did not hold in time (exit 4).
func Timeout(format string, args ...any) *Error {
	return &Error{Code: CodeTimeout, Msg: fmt.Sprintf(format, args...)}
}

// With attaches facts for machine output.
func (e *Error) With(kv ...string) *Error {
	if e.Facts == nil {
		e.Facts = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Facts[kv[i]] = kv[i+1]
	}
	return e
}

// Code returns the exit code an error maps to: a refusal's own code, else 1.
func Code(err error) int {
	if err == nil {
		return 0
	}
	var r *Error
	if errors.As(err, &r) {
		return r.Code
	}
	return CodeFailed
}
