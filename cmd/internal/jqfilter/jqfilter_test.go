package jqfilter

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"fmctl/cmd/internal/jqproto"
)

func TestRunPrintsResultsAsGhDoes(t *testing.T) {
	for _, c := range []struct{ expr, in, out, err string }{
		{".state", `{"state":"alive"}`, "alive\n", ""},
		{".n+1", `{"n":2}`, "3\n", ""},
		{"{a:.s}", `{"s":"<x>"}`, `{"a":"<x>"}` + "\n", ""},
		{".a,.b", `{"a":"x\ny","b":[1]}`, "x\ny\n[1]\n", ""},
		{`.a, error("boom")`, `{"a":1}`, "1\n", "error: boom"},
		{"empty", `{}`, "", ""},
	} {
		code, compileErr := compile(c.expr)
		if compileErr != "" {
			t.Fatalf("%s: %s", c.expr, compileErr)
		}
		out, errText := filter(code, []byte(c.in))
		if string(out) != c.out || errText != c.err {
			t.Errorf("%s on %s: %q, %q; want %q, %q", c.expr, c.in, out, errText, c.out, c.err)
		}
	}
	if _, errText := compile(".["); errText == "" {
		t.Error(".[ compiled")
	}
}

// A filter that never ends is stopped by its bound, not waited on.
func TestRunStopsAFilterThatDoesNotEnd(t *testing.T) {
	code, _ := compile("last(range(1e15))")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, errText := run(ctx, code, map[string]any{})
	if errText == "" || time.Since(start) > 5*time.Second {
		t.Fatalf("after %s: %q, want the run stopped", time.Since(start), errText)
	}
}

func TestServeAnswersEachFrame(t *testing.T) {
	var in bytes.Buffer
	for _, f := range []string{".id", `{"id":"t1"}`, `not json`, `{"id":"t2"}`} {
		if err := jqproto.WriteFrame(&in, []byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := serve(&in, &out); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(&out)
	for _, want := range []struct{ out, err string }{{"", ""}, {"t1\n", ""}, {"", "not JSON"}, {"t2\n", ""}} {
		got, errText, err := jqproto.ReadAnswer(r)
		if err != nil || string(got) != want.out || !strings.Contains(errText, want.err) || (want.err == "") != (errText == "") {
			t.Fatalf("answer %q %q %v; want %q %q", got, errText, err, want.out, want.err)
		}
	}
}

// An expression that does not compile is answered, and ends the service.
func TestServeRefusesABadExpression(t *testing.T) {
	var in bytes.Buffer
	_ = jqproto.WriteFrame(&in, []byte(".["))
	_ = jqproto.WriteFrame(&in, []byte(`{}`))
	var out bytes.Buffer
	if err := serve(&in, &out); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(&out)
	if _, errText, err := jqproto.ReadAnswer(r); err != nil || errText == "" {
		t.Fatalf("compile answer %q %v", errText, err)
	}
	if _, _, err := jqproto.ReadAnswer(r); err == nil {
		t.Fatal("a value was answered after a bad expression")
	}
}
