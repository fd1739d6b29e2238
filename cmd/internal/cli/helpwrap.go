package cli

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// helpWriter lays urfave's help out for a person: a line wider than width
// is broken at its spaces, each continuation under the column its text
// starts in (a flag's or a command's description, after the gap of two or
// more spaces that sets it apart), else indented under the line's start.
// It is the root command's Writer, which urfave prints help and the
// version to; completion scripts and candidates never go through it.
type helpWriter struct {
	w     io.Writer
	width int
	part  []byte // the start of a line not yet ended
}

func (h *helpWriter) Write(p []byte) (int, error) {
	h.part = append(h.part, p...)
	for {
		i := bytes.IndexByte(h.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(h.part[:i])
		h.part = h.part[i+1:]
		if _, err := io.WriteString(h.w, wrapHelpLine(line, h.width)); err != nil {
			return 0, err
		}
	}
}

// flush writes what is left of a line that never ended.
func (h *helpWriter) flush() {
	if len(h.part) > 0 {
		_, _ = h.w.Write(h.part)
		h.part = nil
	}
}

// wrapHelpLine is line, ended, and broken to width when it is wider.
func wrapHelpLine(line string, width int) string {
	if utf8.RuneCountInString(line) <= width {
		return line + "\n"
	}
	text := strings.TrimLeft(line, " ")
	indent := len(line) - len(text)
	// Prose goes on under its own start; a command line (a usage or an
	// example) under itself, indented, so it does not read as a new one.
	head, hang := line[:indent], indent
	if strings.HasPrefix(text, "fm-") {
		hang += 4
	}
	if c := columnStart(line, indent); c > 0 && c <= width-minWidth/2 {
		head, text, hang = line[:c], line[c:], c
	}
	var b strings.Builder
	for i, l := range wrapHanging(text, width-len(head), width-hang) {
		if i > 0 {
			head = strings.Repeat(" ", hang)
		}
		b.WriteString(head + l + "\n")
	}
	return b.String()
}

// columnStart is where the text after the first gap of two or more
// spaces past the line's indent starts, or 0 when there is none.
func columnStart(line string, indent int) int {
	gap := strings.Index(line[indent:], "  ")
	if gap < 0 {
		return 0
	}
	start := indent + gap
	for start < len(line) && line[start] == ' ' {
		start++
	}
	if start == len(line) {
		return 0
	}
	return start
}

// reflowProse joins each paragraph of a help text's prose into one line,
// which the help writer wraps to the terminal's width: texts are written
// wrapped for 80 columns, and rewrapped they take fewer lines where there
// are more. A line that starts with a space (an example, a table) or
// follows one that ends with ':' keeps its own line.
func reflowProse(text string) string {
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	for i, l := range lines {
		if i > 0 && joinable(lines[i-1]) && joinable(l) {
			out[len(out)-1] += " " + l
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func joinable(line string) bool {
	return line != "" && !strings.HasPrefix(line, " ") && !strings.HasSuffix(line, ":")
}
