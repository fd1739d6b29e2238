package jqproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFramesAndAnswersRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	frames := [][]byte{[]byte(".a |\n .b"), {}, []byte(`{"a":"x\ny"}`)}
	for _, f := range frames {
		if err := WriteFrame(&buf, f); err != nil {
			t.Fatal(err)
		}
	}
	r := bufio.NewReader(&buf)
	for _, want := range frames {
		got, err := ReadFrame(r)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("frame %q, %v; want %q", got, err, want)
		}
	}
	if _, err := ReadFrame(r); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last frame: %v, want EOF", err)
	}

	buf.Reset()
	if err := WriteAnswer(&buf, []byte("a\n\x00b\n"), ""); err != nil {
		t.Fatal(err)
	}
	if err := WriteAnswer(&buf, []byte("partial\n"), "error: boom"); err != nil {
		t.Fatal(err)
	}
	r = bufio.NewReader(&buf)
	if out, errText, err := ReadAnswer(r); err != nil || string(out) != "a\n\x00b\n" || errText != "" {
		t.Fatalf("answer %q %q %v", out, errText, err)
	}
	if out, errText, err := ReadAnswer(r); err != nil || string(out) != "partial\n" || errText != "error: boom" {
		t.Fatalf("answer %q %q %v", out, errText, err)
	}
}

// A peer that is not fm-jq (or a broken one) cannot make the reader
// allocate without bound or read a half frame as whole.
func TestMalformedFramesAreRefused(t *testing.T) {
	for _, in := range []string{"x\n", "-1\n", "99999999999\n", "5\nabc", "3"} {
		if _, err := ReadFrame(bufio.NewReader(strings.NewReader(in))); err == nil || errors.Is(err, io.EOF) {
			t.Errorf("frame %q: %v, want an error", in, err)
		}
	}
	for _, in := range []string{"", "1\n", "1 x\n", "-1 0\n", "0 99999999999\n", "4 0\nab"} {
		if _, _, err := ReadAnswer(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("answer %q: no error", in)
		}
	}
}
