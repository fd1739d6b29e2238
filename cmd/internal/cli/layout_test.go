package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestReadableWidth(t *testing.T) {
	for cols, want := range map[int]int{0: 100, 80: 80, 100: 100, 120: 100, 300: 100, 20: 40} {
		if got := ReadableWidth(cols); got != want {
			t.Errorf("ReadableWidth(%d) = %d, want %d", cols, got, want)
		}
	}
}

// A table's last column wraps under itself; the others keep their width.
func TestWriteTableWrapsTheLastColumn(t *testing.T) {
	var b bytes.Buffer
	rows := [][]string{{"FM_SEND_SLEEP", "0.4s", "how long each Enter gets to show its effect on the composer"}, {"FM_X", "unset", ""}}
	if err := WriteTable(&b, 50, []string{"VARIABLE", "VALUE", "MEANING"}, rows); err != nil {
		t.Fatal(err)
	}
	want := `VARIABLE       VALUE  MEANING
FM_SEND_SLEEP  0.4s   how long each Enter gets to
                      show its effect on the
                      composer
FM_X           unset
`
	if b.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

// A help line wider than the screen goes on under the column its text
// starts in (a flag's description), under its own start (prose), or
// indented under a command line (a usage or an example).
func TestWrapHelpLine(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"   --json     print the outcome as one JSON object; --json a,b prints only those fields",
			"   --json     print the outcome as one JSON object;\n              --json a,b prints only those fields\n"},
		{"   Types the text once, literally, into task <id>'s agent and presses Enter",
			"   Types the text once, literally, into task <id>'s\n   agent and presses Enter\n"},
		{"   fm-spawn <id> [--harness H] --project REPO [--base REF] [--branch NAME]",
			"   fm-spawn <id> [--harness H] --project REPO [--base\n       REF] [--branch NAME]\n"},
		{"   short", "   short\n"},
	} {
		if got := wrapHelpLine(c.line, 55); got != c.want {
			t.Errorf("wrapHelpLine(%q) =\n%s\nwant\n%s", c.line, got, c.want)
		}
	}
}

func TestReflowProseKeepsExamplesAndHeadings(t *testing.T) {
	in := "Types the text\nonce, literally.\n\nExamples:\n   fm-send t1 hi\n   fm-send t1 - < notes\nA last\nparagraph."
	want := "Types the text once, literally.\n\nExamples:\n   fm-send t1 hi\n   fm-send t1 - < notes\nA last paragraph."
	if got := reflowProse(in); got != want {
		t.Fatalf("reflowProse =\n%s\nwant\n%s", got, want)
	}
}

// The help writer passes short lines through whole, however they are cut
// into writes, and keeps a line that never ended.
func TestHelpWriterBuffersLines(t *testing.T) {
	var b bytes.Buffer
	h := &helpWriter{w: &b, width: 34}
	for _, part := range []string{"NAME:\n   fm-", "send - deliver one message to a task's agent\n", "tail"} {
		h.Write([]byte(part))
	}
	h.flush()
	want := "NAME:\n   fm-send - deliver one message\n       to a task's agent\ntail"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	if strings.Contains(b.String(), "\n\n") {
		t.Fatal("a blank line appeared")
	}
}
