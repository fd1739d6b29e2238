package stubmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// out is one reply being written in a dialect: streamed as server-sent
// events, or collected and written whole for a request that did not ask for
// a stream.
type out interface {
	begin() error
	text(delta string) error
	call(c Call) error
	end() error
}

// sse writes server-sent events and flushes each, so the CLI draws them as
// they come.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w: w}
}

// event writes one event; an empty name writes a data line alone (Gemini's
// stream has no event names).
func (s sse) event(name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if name != "" {
		if _, err := fmt.Fprintf(s.w, "event: %s\n", name); err != nil {
			return err
		}
	}
	return s.raw(string(b))
}

// raw writes one data line that is not JSON (chat completions' [DONE]).
func (s sse) raw(data string) error {
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", data); err != nil {
		return err
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// writeJSON answers with one JSON document.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}

// failStatus is the HTTP status of a failing scenario; overloaded is the
// dialect's own status for an overload (Anthropic's 529, 503 elsewhere).
func failStatus(k Kind, overloaded int) int {
	switch k {
	case RateLimit:
		return http.StatusTooManyRequests
	case Overload:
		return overloaded
	}
	return http.StatusInternalServerError
}

// writeFailure answers a failing attempt. A rate limit and an overload say
// when to come back, as the real APIs do, so each CLI's back-off is its own
// reading of retry-after.
func writeFailure(w http.ResponseWriter, status int, body any) {
	if status != http.StatusInternalServerError {
		w.Header().Set("retry-after", "1")
	}
	writeJSON(w, status, body)
}

// whole collects a reply for a dialect's non-streaming form.
type whole struct {
	texts []string
	calls []Call
	done  func(text string, calls []Call) error
}

func (o *whole) begin() error            { return nil }
func (o *whole) text(delta string) error { o.texts = append(o.texts, delta); return nil }
func (o *whole) call(c Call) error       { o.calls = append(o.calls, c); return nil }
func (o *whole) end() error {
	var text string
	for _, t := range o.texts {
		text += t
	}
	return o.done(text, o.calls)
}
