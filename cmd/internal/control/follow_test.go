package control

import (
	"slices"
	"strings"
	"testing"
)

func TestNewLinesPrintsWhatWasAddedOnce(t *testing.T) {
	for _, c := range []struct {
		name            string
		prev, cur, want string
	}{
		{"first read", "", "a|b", "a|b"},
		{"nothing new", "a|b", "a|b", ""},
		{"appended", "a|b", "a|b|c|d", "c|d"},
		{"scrolled: the window keeps its last lines", "a|b|c", "b|c|d", "d"},
		{"inserted above a fixed footer", "out1|out2|──|> |──", "out1|out2|out3|──|> |──", "out3"},
		{"a spinner redrawn in place is not output", "out1|⠋ Thinking|> ", "out1|⠙ Thinking|> ", ""},
		{"a line still streaming in is printed as it grows", "out1|Hel|> ", "out1|Hello world|> ", "Hello world"},
		{"a line starting with dashes is text, not a diff header", "a|b", "a|b|--- x|+++ y", "--- x|+++ y"},
	} {
		got := newLines(split(c.prev), split(c.cur))
		if !slices.Equal(got, split(c.want)) {
			t.Errorf("%s: newLines = %q, want %q", c.name, got, split(c.want))
		}
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "|")
}

func TestPlainRowsStripsAndDropsTheEmptyBottom(t *testing.T) {
	got := plainRows([]string{"\x1b[31mred\x1b[0m  ", "", "x", "", "  "})
	if want := []string{"red", "", "x"}; !slices.Equal(got, want) {
		t.Errorf("plainRows = %q, want %q", got, want)
	}
}
