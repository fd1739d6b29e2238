package cli

import (
	"io"
	"strings"
	"unicode/utf8"
)

// MaxWidth is the widest text fmctl lays out for a person: help, status
// and capabilities fit it on any terminal at least that wide, and a
// narrower terminal's own width.
const MaxWidth = 100

// minWidth keeps a layout usable on a terminal too narrow to say so.
const minWidth = 40

// ReadableWidth is the width to lay text out in for a terminal of the
// given columns (0: not a terminal, or one that does not say).
func ReadableWidth(columns int) int {
	if columns <= 0 || columns > MaxWidth {
		return MaxWidth
	}
	return max(columns, minWidth)
}

// Wrap breaks text into lines of at most width runes at its spaces; a word
// longer than width stands alone on its line.
func Wrap(text string, width int) []string { return wrapHanging(text, width, width) }

// wrapHanging is Wrap with a first line of its own width, for text that
// goes on under a deeper indent than it starts at.
func wrapHanging(text string, first, rest int) []string {
	var lines []string
	line, width := "", first
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line, width = word, rest
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// WriteTable writes rows under header in aligned columns two spaces apart,
// the last column's text wrapped so no line is wider than width (each
// continuation under its column). A header of "" is no header line.
func WriteTable(w io.Writer, width int, header []string, rows [][]string) error {
	all := rows
	if len(header) > 0 && header[0] != "" {
		all = append([][]string{header}, rows...)
	}
	if len(all) == 0 {
		return nil
	}
	cols := len(all[0])
	widths := make([]int, cols)
	for _, r := range all {
		for i := range cols - 1 {
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	lead := 0
	for _, n := range widths[:cols-1] {
		lead += n + 2
	}
	last := max(width-lead, minWidth/2)
	var b strings.Builder
	for _, r := range all {
		var head strings.Builder
		for i, cell := range r[:cols-1] {
			head.WriteString(cell + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
		}
		for i, l := range Wrap(r[cols-1], last) {
			prefix := head.String()
			if i > 0 {
				prefix = strings.Repeat(" ", lead)
			}
			b.WriteString(strings.TrimRight(prefix+l, " ") + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
