package phrase

import (
	"fmt"
	"strings"
	"unicode"
)

// echoMax bounds a word the user gave, echoed in an error line, which is
// meant to stay one short line.
const echoMax = 80

// Printable keeps text that came from outside (a word the user gave, a
// line a host wrote), echoed in a message, on one line and free of terminal
// escapes. The one rule: every control character (C0, DEL and C1, which a
// terminal may read as the start of an escape) is shown as \xNN, and the
// first character that starts past 80 bytes is cut, with all after it, for
// "...".
func Printable(s string) string { return PrintableUpTo(s, echoMax) }

// PrintableUpTo is Printable with another bound, for a caller whose text
// is worth more of its length than a word: the last line ssh or a remote
// fmctl wrote is the whole diagnosis of a failed connection.
func PrintableUpTo(s string, max int) string {
	var b strings.Builder
	for i, r := range s {
		if i >= max {
			b.WriteString("...")
			break
		}
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
