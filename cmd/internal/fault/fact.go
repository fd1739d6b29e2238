package fault

// The key=value facts an outcome or an error carries: a text token for the
// stable line and a typed value for --json. Domain packages attach them to
// the errors and outcomes they return; the CLI edge prints them.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Fact is one key=value token of an outcome or a refusal. The text line's
// token and the --json value are kept apart: the text is a fixed contract
// (`bytes=7`, `cleared=yes`), while JSON carries the value as what it is
// (7, true, null).
type Fact struct {
	Key   string // the --json key
	Token string // the text line's key, when it differs from Key
	Text  string // the text line's value
	Value any    // the --json value: string, int, bool or nil
	// JSONOnly facts are in --json output but not in the text line, whose
	// tokens are a fixed contract.
	JSONOnly bool
	// Quoted facts are free text (what a composer held): the text line
	// quotes them even when they are one word, so they never read as a
	// token of fmctl's own.
	Quoted bool
}

// Str is a fact whose value is a word or a name in both forms.
func Str(key, v string) Fact { return Fact{Key: key, Text: v, Value: v} }

// Int is a count: decimal in text, a JSON number.
func Int(key string, n int) Fact { return Fact{Key: key, Text: strconv.Itoa(n), Value: n} }

// IDs is a list of ids: joined by commas in text, a JSON array.
func IDs(key string, ids []string) Fact {
	return Fact{Key: key, Text: strings.Join(ids, ","), Value: ids}
}

// Bool is a yes/no fact spelled true/false in text, a JSON boolean.
func Bool(key string, b bool) Fact { return Fact{Key: key, Text: strconv.FormatBool(b), Value: b} }

// Yes is a fact present only when it holds: `key=yes` in text, true in JSON.
func Yes(key string) Fact { return Fact{Key: key, Text: "yes", Value: true} }

// OrNull is a value that may be absent: the word none stands for it in
// text, null in JSON.
func OrNull(key, v, none string) Fact {
	if v == "" {
		return Fact{Key: key, Text: none, Value: nil}
	}
	return Str(key, v)
}

// TokenAs names the fact differently in the text line, whose tokens predate
// the JSON keys (recover's `outcome=completed` is `"result":"completed"`,
// since `outcome` is the object's own first word).
func (f Fact) TokenAs(token string) Fact {
	f.Token = token
	return f
}

// TextKey is the fact's key in the text line.
func (f Fact) TextKey() string {
	if f.Token != "" {
		return f.Token
	}
	return f.Key
}

// reservedKeys are the fields the printer itself writes: a fact under one
// of them would overwrite what the object is (an outcome word, an error's
// code), so adding one is a programming error caught at construction.
var reservedKeys = map[string]bool{"outcome": true, "error": true, "code": true, "exit": true, "hints": true}

// Append adds facts to have, refusing a reserved key (or one of
// alsoReserved) and a key already present, either of which would write one
// JSON key twice: it panics.
func Append(have, facts []Fact, alsoReserved ...string) []Fact {
	for _, f := range facts {
		if reservedKeys[f.Key] || slices.Contains(alsoReserved, f.Key) {
			panic(fmt.Sprintf("fact key %q is reserved for the printer's own field", f.Key))
		}
		if slices.ContainsFunc(have, func(h Fact) bool { return h.Key == f.Key }) {
			panic(fmt.Sprintf("fact key %q is given twice", f.Key))
		}
		have = append(have, f)
	}
	return have
}

// Get returns the text value of the fact under key, or "".
func Get(facts []Fact, key string) string {
	for _, f := range facts {
		if f.Key == key {
			return f.Text
		}
	}
	return ""
}
