package remote

import (
	"errors"
	"fmt"
)

// Kinds of failed exchange. Before a request was written nothing can have
// happened there; after, only the host's record can say.
var (
	// ErrUnreachable: ssh or the remote fmctl did not come up; nothing
	// was sent.
	ErrUnreachable = errors.New("host unreachable")
	// ErrMismatch: the host's fmctl speaks another protocol; nothing was
	// sent.
	ErrMismatch = errors.New("protocol mismatch")
	// ErrNoBinaries: the host has no fmctl where its entry says; nothing
	// was sent.
	ErrNoBinaries = errors.New("no fmctl on the host")
	// ErrLost: the request was written and its answer never came; it may
	// or may not have run.
	ErrLost = errors.New("answer lost")
)

// Error is a failed exchange with one host.
type Error struct {
	Kind    error
	Host    string
	Request string // the request id, once one was written
	Msg     string
	// Detail is the last thing ssh said on its stderr, if anything.
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Msg
	}
	return fmt.Sprintf("%s (ssh: %s)", e.Msg, e.Detail)
}

func (e *Error) Unwrap() error { return e.Kind }

// Sent reports whether the request can have reached the host's fmctl.
func (e *Error) Sent() bool { return errors.Is(e.Kind, ErrLost) }
