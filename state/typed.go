package state

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"
)

// The typed record: state/<id>.typed says what fmctl itself last typed
// into the task's agent's composer (fm-send's message, exit's exit
// command), whether the composer was seen to let go of it, and when an
// interrupt fmctl sent last followed it. fm-send reads it before it types
// over held text: text that is this text (the agent put the prompt of a
// turn fmctl cancelled back, or a send whose Enter never got through left
// it) is fmctl's own and may be cleared; anything else is a person's
// draft, which is never discarded unasked. Like the send ledger it keeps a
// digest, never the text.

// Typed is one text fmctl typed into a composer.
type Typed struct {
	At     int64  `json:"at"`     // unix nanoseconds when it was typed
	Digest string `json:"digest"` // the typist's digest of the text, as a composer draws it
	// Submitted: the composer was seen to let go of the text after its
	// Enter. Text fmctl typed that was never let go of is its own leftover.
	Submitted bool `json:"submitted,omitempty"`
	// Undrawn: the composer was never seen to draw the text, so no Enter
	// followed it. A slow agent may draw it later (kilo, loaded, more
	// than 6 s after it was typed), and a text typed before then would be
	// glued to it.
	Undrawn bool `json:"undrawn,omitempty"`
	// Interrupted is when fmctl last sent the interrupt keys after the
	// text was typed (unix nanoseconds), 0 for never: an agent that
	// restores a cancelled prompt puts exactly this text back.
	Interrupted int64 `json:"interrupted,omitempty"`
	// Launch: the text is the launch prompt the launch line handed the
	// agent. An agent that draws it in its composer before it submits it
	// (kilo, loaded, for more than a minute) has not yet taken it: it is
	// still starting, and the text is neither a person's draft nor
	// fmctl's to clear.
	Launch bool `json:"launch,omitempty"`
}

// TypedPath is where the task's typed record lives.
func (s Store) TypedPath(id string) string { return filepath.Join(s.Dir, id+".typed") }

// RecordTyped replaces the typed record of task id.
func (s Store) RecordTyped(id string, t Typed) error {
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode what was typed into %s: %w", id, err)
	}
	if err := WriteAtomic(s.TypedPath(id), append(data, '\n')); err != nil {
		return fmt.Errorf("record what was typed into %s: %w", id, err)
	}
	return nil
}

// ReadTyped is task id's typed record; ok is false when there is none or
// it cannot be read, which makes any held text a draft.
func (s Store) ReadTyped(id string) (Typed, bool) {
	data, err := ReadSmallFile(s.TypedPath(id), 4096)
	if err != nil {
		return Typed{}, false
	}
	var t Typed
	if json.Unmarshal(data, &t) != nil || t.At <= 0 || t.Digest == "" {
		return Typed{}, false
	}
	return t, true
}

// MarkInterrupted records that fmctl sent task id's interrupt keys at at,
// after the text the typed record names; with no typed record there is
// nothing an agent could restore, and nothing is written.
func (s Store) MarkInterrupted(id string, at time.Time) error {
	t, ok := s.ReadTyped(id)
	if !ok || at.UnixNano() < t.At {
		return nil
	}
	t.Interrupted = at.UnixNano()
	return s.RecordTyped(id, t)
}

// Own is what held text fmctl typed itself is.
type Own string

const (
	OwnRestored Own = "restored" // the agent put it back after an interrupt fmctl sent
	OwnLeftover Own = "leftover" // the composer never let go of it
	// OwnSubmitted: it was submitted, and the composer still draws it
	// (gemini runs its prompt hooks, fmctl's among them, before it
	// redraws the composer, after its record already holds the text).
	// It is waited out, never cleared: a clear key pressed then would
	// land on the turn it starts.
	OwnSubmitted Own = "submitted"
	// OwnLaunch: the launch prompt, still in the composer of an agent that
	// has not started its first turn; waited for, as a starting agent is.
	OwnLaunch Own = "launch"
)

// Owns says whether held text whose digest is digest is fmctl's own, and
// how it came to be held: "" is a person's draft.
func (t Typed) Owns(digest string) Own {
	switch {
	case digest == "" || digest != t.Digest:
		return ""
	case t.Interrupted >= t.At:
		return OwnRestored
	case t.Launch:
		return OwnLaunch
	case !t.Submitted:
		return OwnLeftover
	}
	return OwnSubmitted
}
