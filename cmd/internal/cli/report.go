// Package report prints outcomes: one stable text line of `word id key=value`
// tokens, or with --json one JSON object carrying the same facts.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"fmctl/cmd/internal/fault"
)

// Outcome is what a verb did.
type Outcome struct {
	Word  string // interrupt-delivered, stopped, sent, ...
	ID    string
	Facts []fault.Fact
}

// Add appends a fact whose value is a word or a name (see Put for typed
// facts).
func (o *Outcome) Add(key, value string) *Outcome {
	return o.Put(fault.Str(key, value))
}

// AddJSON appends a fact shown only in --json output.
func (o *Outcome) AddJSON(key, value string) *Outcome {
	f := fault.Str(key, value)
	f.JSONOnly = true
	return o.Put(f)
}

// AddQuoted appends a fact whose value is free text (what a composer
// held): quoted in the text line, so its spaces and any `=` stay one
// token; as it is in --json.
func (o *Outcome) AddQuoted(key, value string) *Outcome {
	f := fault.Str(key, value)
	f.Quoted = true
	return o.Put(f)
}

// Put appends typed facts. A fact may not take the key of a field the
// outcome object already has (outcome, id) or of an error's (error, code,
// exit), nor a key given before: that would make one object read as
// another, so it panics.
func (o *Outcome) Put(facts ...fault.Fact) *Outcome {
	o.Facts = fault.Append(o.Facts, facts, "id")
	return o
}

// Get returns a fact's text value.
func (o Outcome) Get(key string) string { return fault.Get(o.Facts, key) }

// Line renders the text form.
func (o Outcome) Line() string {
	var b strings.Builder
	b.WriteString(o.Word)
	if o.ID != "" {
		b.WriteByte(' ')
		b.WriteString(o.ID)
	}
	for _, f := range o.Facts {
		switch {
		case f.JSONOnly:
		case f.Quoted:
			fmt.Fprintf(&b, " %s=%s", f.TextKey(), strconv.Quote(f.Text))
		default:
			fmt.Fprintf(&b, " %s=%s", f.TextKey(), TextValue(f.Text))
		}
	}
	return b.String()
}

// TextValue is a value as a key=value line prints it: as it is when it is
// one plain word, else double-quoted with Go's escapes (strconv.Quote), so
// the line still splits into its tokens at its spaces and a value that
// itself holds a quote or a backslash reads back unchanged. An empty value
// stays `key=`.
func TextValue(v string) string {
	if strings.ContainsFunc(v, func(r rune) bool {
		return r == '"' || r == '\\' || unicode.IsSpace(r) || !unicode.IsPrint(r)
	}) {
		return strconv.Quote(v)
	}
	return v
}

// JSON renders the --json form: outcome and id first, then the facts in
// the text line's order, each as its typed value.
func (o Outcome) JSON() json.Marshaler {
	obj := object{{"outcome", o.Word}}
	if o.ID != "" {
		obj = append(obj, field{"id", o.ID})
	}
	for _, f := range o.Facts {
		obj = append(obj, field{f.Key, f.Value})
	}
	return obj
}

// Printer writes outcomes and errors in the chosen form.
type Printer struct {
	Out, Err io.Writer
	JSON     bool
	TTY      bool // stderr is a terminal: colour the error word, show live waits
	// OutTTY: stdout is a terminal, where a person reads it (list's
	// aligned table); piped, output keeps its stable lines.
	OutTTY bool
	// Width is what a layout for a person may take (ReadableWidth of
	// stdout's terminal).
	Width int
	// Output is the command line's --json field list or --jq filter (nil:
	// none), applied to outcomes, never to errors.
	Output *Output
}

// Outcome prints one outcome on stdout.
func (p Printer) Outcome(o Outcome) {
	if p.JSON {
		p.Output.emit(p.Out, o.JSON())
		return
	}
	fmt.Fprintln(p.Out, o.Line())
}

// Value prints v as one JSON line on stdout: an outcome whose facts do not
// fit a text line's tokens (list's array of tasks).
// Pane text is full of '<', '>' and '&', so they are not HTML-escaped.
func (p Printer) Value(v any) {
	p.Output.emit(p.Out, v)
}

// Notice prints a human sentence on stderr (never in JSON mode's stdout).
func (p Printer) Notice(format string, args ...any) {
	fmt.Fprintf(p.Err, "notice: "+format+"\n", args...)
}

// Warn prints a warning on stderr.
func (p Printer) Warn(format string, args ...any) {
	fmt.Fprintf(p.Err, "warning: "+format+"\n", args...)
}

// Error prints err once and returns its exit code. Under --json it is one
// object on stderr: the sentence, its stable code, the exit code, then the
// refusal's facts.
func (p Printer) Error(err error) int {
	exit := Code(err)
	if p.JSON {
		writeJSON(p.Err, errorJSON(err))
		return exit
	}
	word := "error:"
	if p.TTY {
		word = "\x1b[1;31merror:\x1b[0m"
	}
	fmt.Fprintf(p.Err, "%s %s\n", word, err.Error())
	for _, h := range fault.HintsOf(err) {
		fmt.Fprintf(p.Err, "hint: %s\n", h)
	}
	return exit
}

// errorJSON is err's --json object.
func errorJSON(err error) json.Marshaler {
	obj := object{{"error", err.Error()}, {"code", string(fault.CodeOf(err))}, {"exit", Code(err)}}
	var r *fault.Error
	if errors.As(err, &r) {
		for _, f := range r.Facts {
			obj = append(obj, field{f.Key, f.Value})
		}
	}
	if hints := fault.HintsOf(err); len(hints) > 0 {
		obj = append(obj, field{"hints", hints})
	}
	return obj
}

func writeJSON(w io.Writer, v json.Marshaler) {
	// An object of strings, numbers, booleans and nulls always encodes.
	b, _ := v.MarshalJSON()
	w.Write(append(b, '\n'))
}
