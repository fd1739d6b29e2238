package phrase

import (
	"fmt"
	"strings"
)

// Printable keeps a word the user gave, echoed in a message, on one line
// and free of terminal escapes: control characters are shown as \xNN, and
// past 80 characters it is cut with "...".
func Printable(s string) string {
	const max = 80
	var b strings.Builder
	for i, r := range s {
		if i >= max {
			b.WriteString("...")
			break
		}
		if r < 0x20 || r == 0x7f {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
