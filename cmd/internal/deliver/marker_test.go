package deliver

import (
	"bytes"
	"strings"
	"testing"
)

func TestMarkBytesAndIdempotence(t *testing.T) {
	want := append([]byte("[fm-from-firstmate]"), 0xE2, 0x81, 0xA3)
	if !bytes.Equal([]byte(FromFirstmateMark), want) {
		t.Fatalf("marker bytes = % x, want % x", FromFirstmateMark, want)
	}
	once := Mark("hello")
	if !bytes.Equal([]byte(once), append(append([]byte(nil), want...), "hello"...)) {
		t.Errorf("Mark(hello) = % x", once)
	}
	if twice := Mark(once); twice != once {
		t.Errorf("Mark is not idempotent: %q then %q", once, twice)
	}
	if got := Mark(""); got != FromFirstmateMark {
		t.Errorf("Mark(\"\") = %q", got)
	}
	// The label alone, without the separator, is not the marker.
	if got := Mark("[fm-from-firstmate]hi"); !strings.HasPrefix(got, FromFirstmateMark+"[fm-from-firstmate]") {
		t.Errorf("a bare label was taken as already marked: %q", got)
	}
}

func TestCheckTextRefusesControlBytes(t *testing.T) {
	bad := map[string]string{
		"ESC":            "stop\x1b[A",
		"bare ESC":       "\x1b",
		"NUL":            "a\x00b",
		"DEL":            "a\x7fb",
		"BEL":            "ding\x07",
		"lone CR":        "a\rb",
		"backspace":      "a\bb",
		"C1 CSI":         "a\u009bb",
		"invalid UTF-8":  "caf\xe9",
		"truncated rune": "\xe2\x81",
		"empty":          "",
		"only spaces":    " \n\t ",
	}
	for name, in := range bad {
		if out, err := CheckText(in); err == nil {
			t.Errorf("%s: CheckText(%q) accepted as %q", name, in, out)
		}
	}
	_, err := CheckText("x\x1by")
	if err == nil || !strings.Contains(err.Error(), "0x1b at byte 1") {
		t.Errorf("ESC error %v does not name the byte and offset", err)
	}
}

func TestCheckTextAcceptsTextAndConvertsCRLF(t *testing.T) {
	good := map[string]string{
		"tabs\tand\ttabs":         "tabs\tand\ttabs",
		"line1\nline2\n":          "line1\nline2\n",
		"crlf\r\nlines\r\n":       "crlf\nlines\n",
		"ünïcödé 日本語 😀 ✓":         "ünïcödé 日本語 😀 ✓",
		"/exit":                   "/exit",
		FromFirstmateMark + "hi":  FromFirstmateMark + "hi",
		"\uFFFD is a real char":   "\uFFFD is a real char",
		strings.Repeat("x", 5000): strings.Repeat("x", 5000),
	}
	for in, want := range good {
		got, err := CheckText(in)
		if err != nil {
			t.Errorf("CheckText(%q) refused: %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("CheckText(%q) = %q, want %q", in, got, want)
		}
	}
}
