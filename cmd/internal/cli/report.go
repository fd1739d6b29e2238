// Package report prints outcomes: one stable text line of `word id key=value`
// tokens, or with --json one JSON object carrying the same facts.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Fact is one key=value token of an outcome.
type Fact struct {
	Key   string
	Value string
	// JSONOnly facts are in --json output but not in the text line, whose
	// tokens are a fixed contract.
	JSONOnly bool
}

// Outcome is what a verb did.
type Outcome struct {
	Word  string // interrupt-delivered, stopped, sent, ...
	ID    string
	Facts []Fact
}

// Add appends a fact.
func (o *Outcome) Add(key, value string) *Outcome {
	o.Facts = append(o.Facts, Fact{Key: key, Value: value})
	return o
}

// AddJSON appends a fact shown only in --json output.
func (o *Outcome) AddJSON(key, value string) *Outcome {
	o.Facts = append(o.Facts, Fact{Key: key, Value: value, JSONOnly: true})
	return o
}

// Get returns a fact's value.
func (o Outcome) Get(key string) string {
	for _, f := range o.Facts {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// Line renders the text form.
func (o Outcome) Line() string {
	var b strings.Builder
	b.WriteString(o.Word)
	if o.ID != "" {
		b.WriteByte(' ')
		b.WriteString(o.ID)
	}
	for _, f := range o.Facts {
		if !f.JSONOnly {
			fmt.Fprintf(&b, " %s=%s", f.Key, f.Value)
		}
	}
	return b.String()
}

// Map renders the JSON form.
func (o Outcome) Map() map[string]string {
	m := map[string]string{"outcome": o.Word}
	if o.ID != "" {
		m["id"] = o.ID
	}
	for _, f := range o.Facts {
		m[f.Key] = f.Value
	}
	return m
}

// Printer writes outcomes and errors in the chosen form.
type Printer struct {
	Out, Err io.Writer
	JSON     bool
	TTY      bool // stderr is a terminal: colour the error word, show live waits
}

// Outcome prints one outcome on stdout.
func (p Printer) Outcome(o Outcome) {
	if p.JSON {
		writeJSON(p.Out, o.Map())
		return
	}
	fmt.Fprintln(p.Out, o.Line())
}

// Value prints v as one JSON line on stdout: the --json outcome of a
// read-only verb, whose facts are typed (numbers, booleans, lists).
// Pane text is full of '<', '>' and '&', so they are not HTML-escaped.
func (p Printer) Value(v any) {
	enc := json.NewEncoder(p.Out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// Notice prints a human sentence on stderr (never in JSON mode's stdout).
func (p Printer) Notice(format string, args ...any) {
	fmt.Fprintf(p.Err, "notice: "+format+"\n", args...)
}

// Warn prints a warning on stderr.
func (p Printer) Warn(format string, args ...any) {
	fmt.Fprintf(p.Err, "warning: "+format+"\n", args...)
}

// Error prints err once and returns its exit code.
func (p Printer) Error(err error) int {
	code := Code(err)
	if p.JSON {
		m := map[string]any{"error": err.Error(), "code": code}
		var r *Error
		if errors.As(err, &r) && len(r.Facts) > 0 {
			for k, v := range r.Facts {
				m[k] = v
			}
		}
		writeJSON(p.Err, m)
		return code
	}
	if p.TTY {
		fmt.Fprintf(p.Err, "\x1b[1;31merror:\x1b[0m %s\n", err.Error())
		return code
	}
	fmt.Fprintf(p.Err, "error: %s\n", err.Error())
	return code
}

func writeJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}
