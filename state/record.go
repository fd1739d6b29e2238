// Package state owns the home's durable records: the per-task meta record,
// the relaunch journal and the per-task lifecycle lock. It is the only package
// that writes them, and every write is an atomic replace.
package state

import (
	"bytes"
	"fmt"
	"strings"
)

// Entry is one key=value line of a record.
type Entry struct {
	Key   string
	Value string
}

// Record is a key=value file kept in its written order, unknown keys and
// repeated keys included, so a rewrite preserves everything it did not change.
type Record struct {
	Entries []Entry
}

// ParseRecord reads a record. A line must be key=value with a non-empty key
// of [A-Za-z0-9_.-]; blank lines are skipped. Anything else is malformed.
func ParseRecord(data []byte) (Record, error) {
	var r Record
	if bytes.IndexByte(data, 0) >= 0 {
		return r, fmt.Errorf("record contains a NUL byte; it is not a text record")
	}
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return Record{}, fmt.Errorf("line %d is not key=value", i+1)
		}
		if err := checkKey(k); err != nil {
			return Record{}, fmt.Errorf("line %d: %w", i+1, err)
		}
		if err := CheckValue(v); err != nil {
			return Record{}, fmt.Errorf("line %d (%s): %w", i+1, k, err)
		}
		r.Entries = append(r.Entries, Entry{Key: k, Value: v})
	}
	return r, nil
}

func checkKey(k string) error {
	if k == "" {
		return fmt.Errorf("empty key")
	}
	for _, c := range []byte(k) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		default:
			return fmt.Errorf("key %q has a character outside [A-Za-z0-9_.-]", k)
		}
	}
	return nil
}

// CheckValue refuses what no record line can hold; a caller refuses such a
// value before anything is made from it.
func CheckValue(v string) error {
	if strings.ContainsAny(v, "\n\r\x00") {
		return fmt.Errorf("value holds a newline, carriage return or NUL")
	}
	return nil
}

// Bytes renders the record: one key=value line each, newline-terminated.
func (r Record) Bytes() ([]byte, error) {
	var b bytes.Buffer
	for _, e := range r.Entries {
		if err := checkKey(e.Key); err != nil {
			return nil, err
		}
		if err := CheckValue(e.Value); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Key, err)
		}
		b.WriteString(e.Key)
		b.WriteByte('=')
		b.WriteString(e.Value)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// Get returns the last value recorded for key (readers take the last line,
// as the original toolkit's readers did).
func (r Record) Get(key string) string {
	v, _ := r.Lookup(key)
	return v
}

// Lookup returns the last value for key and whether the key is present.
func (r Record) Lookup(key string) (string, bool) {
	for i := len(r.Entries) - 1; i >= 0; i-- {
		if r.Entries[i].Key == key {
			return r.Entries[i].Value, true
		}
	}
	return "", false
}

// Count returns how many lines carry key.
func (r Record) Count(key string) int {
	n := 0
	for _, e := range r.Entries {
		if e.Key == key {
			n++
		}
	}
	return n
}

// Set replaces every line of key with one line at the first one's place, or
// appends it.
func (r *Record) Set(key, value string) {
	out := r.Entries[:0:0]
	placed := false
	for _, e := range r.Entries {
		if e.Key != key {
			out = append(out, e)
			continue
		}
		if !placed {
			out = append(out, Entry{Key: key, Value: value})
			placed = true
		}
	}
	if !placed {
		out = append(out, Entry{Key: key, Value: value})
	}
	r.Entries = out
}

// Delete removes every line of key.
func (r *Record) Delete(key string) {
	out := r.Entries[:0:0]
	for _, e := range r.Entries {
		if e.Key != key {
			out = append(out, e)
		}
	}
	r.Entries = out
}

// Map returns the last value of every key.
func (r Record) Map() map[string]string {
	m := make(map[string]string, len(r.Entries))
	for _, e := range r.Entries {
		m[e.Key] = e.Value
	}
	return m
}

// Clone returns an independent copy.
func (r Record) Clone() Record {
	return Record{Entries: append([]Entry(nil), r.Entries...)}
}
