package phrase

import (
	"strings"
	"testing"
)

func TestPrintable(t *testing.T) {
	cases := []struct{ in, want string }{
		{"interrupt", "interrupt"},
		{"a\nb\tc", `a\x0ab\x09c`},
		{"\x1b[2J", `\x1b[2J`},
		{"del\x7f", `del\x7f`},
		{"csi\u009b2J", `csi\x9b2J`},
		{"naïve 日本", "naïve 日本"},
		{strings.Repeat("x", 80), strings.Repeat("x", 80)},
		{strings.Repeat("x", 81), strings.Repeat("x", 80) + "..."},
		{strings.Repeat("x", 79) + "日本", strings.Repeat("x", 79) + "日..."}, // cut between characters
	}
	for _, c := range cases {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := PrintableUpTo(strings.Repeat("y", 300), 200); got != strings.Repeat("y", 200)+"..." {
		t.Errorf("PrintableUpTo(300 bytes, 200) = %q", got)
	}
}
