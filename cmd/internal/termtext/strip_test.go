package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStripHostileInputs(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain text and layout", "hello\tworld\nnext line\n", "hello\tworld\nnext line\n"},
		{"utf-8 text whose bytes include 0x80-0x9f", "café — naïve ✓ 日本", "café — naïve ✓ 日本"},
		{"SGR colour", "\x1b[1;31merror\x1b[0m done", "error done"},
		{"cursor moves and private modes", "a\x1b[2J\x1b[H\x1b[?1049hb\x1b[?25l", "ab"},
		{"OSC 52 clipboard, BEL-terminated", "before\x1b]52;c;cm0gLXJmIH4=\x07after", "beforeafter"},
		{"OSC 52 clipboard, ST-terminated", "before\x1b]52;c;cm0gLXJmIH4=\x1b\\after", "beforeafter"},
		{"OSC 8 link keeps its label only", "see \x1b]8;;https://evil.example/\x1b\\the docs\x1b]8;;\x1b\\.", "see the docs."},
		{"OSC title", "\x1b]0;pwned\x07x", "x"},
		{"DCS tmux passthrough of an OSC 52", "a\x1bPtmux;\x1b\x1b]52;c;ZXZpbA==\x07\x1b\\b", "ab"},
		{"DCS with a BEL inside is not ended by it", "a\x1bPq#0;2;0;0;0\x07visible?\x1b\\b", "ab"},
		{"8-bit CSI", "a\x9b31mred\x9b0m", "ared"},
		{"8-bit OSC ended by 8-bit ST", "a\x9d52;c;eHl6\x9cb", "ab"},
		{"8-bit OSC ended by BEL", "a\x9d0;title\x07b", "ab"},
		{"8-bit DCS", "a\x90tmux;payload\x9cb", "ab"},
		{"UTF-8 encoded C1 CSI and OSC", "a\u009b1mb\u009d0;t\u009cc", "abc"},
		{"APC, PM and SOS", "a\x1b_kitty-graphics\x1b\\b\x1b^pm\x1b\\c\x1bXsos\x1b\\d", "abcd"},
		{"8-bit APC", "a\x9fapc\x9cb", "ab"},
		{"lone ESC before text", "a\x1b\nb", "a\nb"},
		{"lone ESC at the end", "abc\x1b", "abc"},
		{"two-character sequences", "a\x1b7b\x1b8c\x1bcd\x1b(Be", "abcde"},
		{"lone ST", "a\x1b\\b", "ab"},
		{"C0 controls and DEL dropped", "a\x00b\x07c\x08d\re\x7ff\x0cg", "abcdefg"},
		{"other C1 dropped", "a\x85b\u0084c", "abc"},
		{"CAN aborts a CSI", "a\x1b[31\x18b", "ab"},
		{"SUB aborts an OSC", "a\x1b]52;c;x\x1ab", "ab"},
		{"ESC aborts an unfinished CSI and starts anew", "a\x1b[31\x1b[0mb", "ab"},
		{"ESC inside an OSC starts a new sequence", "a\x1b]0;t\x1b[1mb", "ab"},
		{"nested OSC inside OSC", "a\x1b]0;\x1b]52;c;x\x07\x07b", "ab"},
		{"unterminated OSC swallows the rest", "visible\x1b]52;c;hidden\nmore", "visible"},
		{"unterminated DCS swallows the rest", "visible\x1bPtmux;\x1b\x1b]52;c;x\x07", "visible"},
		{"unterminated CSI at the end", "abc\x1b[12;", "abc"},
		{"malformed CSI byte ends it and stays text", "a\x1b[1é", "aé"},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb\xc3", "a\ufffdb\ufffd"},
	}
	for _, c := range cases {
		got := Strip(c.in)
		if got != c.want {
			t.Errorf("%s: Strip(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// FuzzStripLeavesNoControl: whatever comes in, what comes out is valid
// UTF-8 with no control character but newline and tab.
func FuzzStripLeavesNoControl(f *testing.F) {
	for _, s := range []string{"\x1b]52;c;x\x07", "\x1bPtmux;\x1b\x1b]0;t\x07\x1b\\", "\x9b1m\x9d0;x\x9c", "a\x1b[", "é\x9b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Strip(in)
		if !utf8.ValidString(out) {
			t.Fatalf("Strip(%q) = %q is not valid UTF-8", in, out)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
				t.Fatalf("Strip(%q) = %q keeps control %U", in, out, r)
			}
		}
		if strings.Count(out, "\n") > strings.Count(in, "\n") {
			t.Fatalf("Strip(%q) added lines", in)
		}
	})
}
