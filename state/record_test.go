package state

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) Record {
	t.Helper()
	r, err := ParseRecord([]byte(s))
	if err != nil {
		t.Fatalf("ParseRecord(%q): %v", s, err)
	}
	return r
}

func mustBytes(t *testing.T, r Record) string {
	t.Helper()
	b, err := r.Bytes()
	if err != nil {
		t.Fatalf("Bytes(%+v): %v", r, err)
	}
	return string(b)
}

func TestRecordRoundTripIsByteIdentical(t *testing.T) {
	in := "window=fmses:fm-t1\nendpoint_task_id=t1\nbackend=tmux\nharness=claude\nkind=ship\n" +
		"worktree=/w/t1\nmodel=default\neffort=high\nfuture_key=kept=as=is\nnote=  spaced value  \nempty=\n"
	r := mustParse(t, in)
	if got := mustBytes(t, r); got != in {
		t.Fatalf("round trip changed the record\n got %q\nwant %q", got, in)
	}
	if r.Get("future_key") != "kept=as=is" {
		t.Errorf("value after the first '=' not kept: %q", r.Get("future_key"))
	}
	if r.Get("note") != "  spaced value  " {
		t.Errorf("value whitespace not preserved: %q", r.Get("note"))
	}
	if v, ok := r.Lookup("empty"); !ok || v != "" {
		t.Errorf("empty value: %q,%v", v, ok)
	}
}

func TestRecordKeepsOrderUnknownAndDuplicateKeys(t *testing.T) {
	in := "zeta=1\nalpha=2\nx-custom.key_1=3\nalpha=4\n"
	r := mustParse(t, in)
	want := []Entry{{"zeta", "1"}, {"alpha", "2"}, {"x-custom.key_1", "3"}, {"alpha", "4"}}
	if !reflect.DeepEqual(r.Entries, want) {
		t.Fatalf("entries = %+v, want %+v", r.Entries, want)
	}
	if got := mustBytes(t, r); got != in {
		t.Errorf("rewrite lost order or duplicates: %q", got)
	}
	if r.Count("alpha") != 2 || r.Count("zeta") != 1 || r.Count("nope") != 0 {
		t.Errorf("Count: alpha=%d zeta=%d nope=%d", r.Count("alpha"), r.Count("zeta"), r.Count("nope"))
	}
}

func TestRecordGetTakesTheLastLine(t *testing.T) {
	r := mustParse(t, "window=a:1\nwindow=b:2\nwindow=c:3\n")
	if got := r.Get("window"); got != "c:3" {
		t.Errorf("Get = %q, want the last line c:3", got)
	}
	if got := r.Map()["window"]; got != "c:3" {
		t.Errorf("Map = %q, want c:3", got)
	}
	if v, ok := r.Lookup("missing"); ok || v != "" {
		t.Errorf("Lookup(missing) = %q,%v", v, ok)
	}
	if r.Get("missing") != "" {
		t.Error("Get(missing) not empty")
	}
}

func TestRecordSetReplacesAllAtFirstPlace(t *testing.T) {
	r := mustParse(t, "a=1\nk=old1\nb=2\nk=old2\nc=3\n")
	r.Set("k", "new")
	if got := mustBytes(t, r); got != "a=1\nk=new\nb=2\nc=3\n" {
		t.Errorf("Set existing: %q", got)
	}
	r.Set("d", "4")
	if got := mustBytes(t, r); got != "a=1\nk=new\nb=2\nc=3\nd=4\n" {
		t.Errorf("Set new appends: %q", got)
	}
}

func TestRecordDeleteRemovesEveryLine(t *testing.T) {
	r := mustParse(t, "a=1\nk=x\nb=2\nk=y\n")
	r.Delete("k")
	if got := mustBytes(t, r); got != "a=1\nb=2\n" {
		t.Errorf("Delete: %q", got)
	}
	r.Delete("absent")
	if got := mustBytes(t, r); got != "a=1\nb=2\n" {
		t.Errorf("Delete absent changed the record: %q", got)
	}
}

func TestRecordSetAndDeleteDoNotAliasTheOriginal(t *testing.T) {
	orig := mustParse(t, "a=1\nk=x\nb=2\n")
	clone := orig.Clone()
	clone.Set("a", "changed")
	clone.Delete("b")
	if got := mustBytes(t, orig); got != "a=1\nk=x\nb=2\n" {
		t.Errorf("editing a clone changed the original: %q", got)
	}
	// Set and Delete on a copy of the struct (sharing Entries) must not
	// write through into the other copy's backing array.
	shared := orig
	shared.Delete("a")
	shared.Set("k", "y")
	if got := mustBytes(t, orig); got != "a=1\nk=x\nb=2\n" {
		t.Errorf("Set/Delete wrote through a shared slice: %q", got)
	}
}

func TestParseRecordRefusesMalformedLines(t *testing.T) {
	cases := map[string]string{
		"no equals":        "window=a:b\njunk\n",
		"empty key":        "=value\n",
		"space in key":     "my key=v\n",
		"key with slash":   "a/b=v\n",
		"unicode key":      "clé=v\n",
		"CR in value":      "window=a:b\r\n",
		"CR alone":         "a=1\rb=2\n",
		"NUL in value":     "window=a\x00b\n",
		"NUL anywhere":     "a=1\n\x00\n",
		"leading space":    " window=a\n",
		"tab key":          "\twindow=a\n",
		"binary":           "\xff\xfe\x01=\n",
		"CRLF whole file":  "a=1\r\nb=2\r\n",
		"blank with space": "a=1\n \nb=2\n",
	}
	for name, in := range cases {
		if r, err := ParseRecord([]byte(in)); err == nil {
			t.Errorf("%s: ParseRecord(%q) accepted: %+v", name, in, r)
		}
	}
}

func TestParseRecordAcceptsBlankLinesAndMissingFinalNewline(t *testing.T) {
	r := mustParse(t, "\n\na=1\n\nb=2")
	want := []Entry{{"a", "1"}, {"b", "2"}}
	if !reflect.DeepEqual(r.Entries, want) {
		t.Fatalf("entries = %+v", r.Entries)
	}
	if got := mustBytes(t, r); got != "a=1\nb=2\n" {
		t.Errorf("Bytes = %q, want newline-terminated lines", got)
	}
	if r := mustParse(t, "k=v=w\xff"); r.Get("k") != "v=w\xff" {
		t.Errorf("non-UTF-8 value bytes not kept verbatim: %q", r.Get("k"))
	}
}

func TestEmptyRecord(t *testing.T) {
	for _, in := range []string{"", "\n", "\n\n\n"} {
		r := mustParse(t, in)
		if len(r.Entries) != 0 {
			t.Errorf("ParseRecord(%q) has entries %+v", in, r.Entries)
		}
		if got := mustBytes(t, r); got != "" {
			t.Errorf("empty record renders %q", got)
		}
	}
	var r Record
	r.Set("a", "1")
	if got := mustBytes(t, r); got != "a=1\n" {
		t.Errorf("Set on zero Record: %q", got)
	}
}

func TestBytesRefusesWhatParseWouldRefuse(t *testing.T) {
	bad := []Record{
		{Entries: []Entry{{"", "v"}}},
		{Entries: []Entry{{"a b", "v"}}},
		{Entries: []Entry{{"k=x", "v"}}},
		{Entries: []Entry{{"k", "two\nlines"}}},
		{Entries: []Entry{{"k", "cr\r"}}},
		{Entries: []Entry{{"k", "nul\x00"}}},
		// an injected line would add a second window= to the record
		{Entries: []Entry{{"note", "x\nwindow=evil:fm-t1"}}},
	}
	for _, r := range bad {
		if b, err := r.Bytes(); err == nil {
			t.Errorf("Bytes(%+v) = %q, want refused", r.Entries, b)
		}
	}
	ok := Record{Entries: []Entry{{"k", "tabs\tand = signs and ünïcode"}}}
	b, err := ok.Bytes()
	if err != nil || !bytes.Equal(b, []byte("k=tabs\tand = signs and ünïcode\n")) {
		t.Errorf("Bytes = %q, %v", b, err)
	}
}

func TestParseRecordErrorNamesTheLine(t *testing.T) {
	_, err := ParseRecord([]byte("a=1\nb=2\nbroken\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error %v does not name line 3", err)
	}
}
