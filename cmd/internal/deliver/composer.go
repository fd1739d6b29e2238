// Package deliver submits text to an agent's composer and proves the submit:
// the text is typed once, then Enter is pressed (and only Enter re-pressed)
// until the composer visibly let go of the text. It polls the screen instead
// of sleeping blind, so a fast agent costs milliseconds.
package deliver

import (
	"strings"
	"unicode/utf8"

	"fmctl/backends"
)

// ComposerState is what a screen says about the text we typed.
type ComposerState int

const (
	Unknown ComposerState = iota // the screen does not show either way
	Holding                      // the composer still holds the text
	Cleared                      // the text was seen, and the composer let go of it
	// HoldingBusy: the composer still draws the text while a turn runs. An
	// agent that queues what is submitted during a turn may have taken the
	// first Enter and not redrawn yet (gemini, running its hooks between
	// turns, drew the text for over 400 ms after queueing it): another Enter
	// would queue it twice.
	HoldingBusy
)

const tailRunes = 8

// tailOf is the end of the text's last line, which is what sits next to the
// cursor once the text is typed (long text wraps, so the start is elsewhere).
func tailOf(text string) string {
	lines := strings.Split(strings.TrimRight(text, " \t\n"), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	// A terminal draws a tab as spaces to the next tab stop, never as
	// itself: only what follows the last one can be found on the screen.
	if i := strings.LastIndexByte(last, '\t'); i >= 0 {
		last = last[i+1:]
	}
	if n := utf8.RuneCountInString(last); n > tailRunes {
		r := []rune(last)
		last = string(r[n-tailRunes:])
	}
	return last
}

// composerLine is the line the cursor sits on (the composer's input line in
// every agent TUI), or the last non-empty line when the backend reports no cursor.
func composerLine(s backends.Screen) (line, above string) {
	idx := -1
	if s.Cursor && s.CursorY >= 0 && s.CursorY < len(s.Lines) {
		idx = s.CursorY
	} else {
		for i := len(s.Lines) - 1; i >= 0; i-- {
			if strings.TrimSpace(s.Lines[i]) != "" {
				idx = i
				break
			}
		}
	}
	if idx < 0 {
		return "", ""
	}
	if idx > 0 {
		above = s.Lines[idx-1]
	}
	return s.Lines[idx], above
}

// trimFrame drops trailing padding and box-drawing borders around a composer.
func trimFrame(s string) string {
	return strings.TrimRight(s, " \t│┃║|╯╰╮╭─")
}

// showsTail reports whether the composer line ends with the text's tail. A
// wrapped text's tail can straddle the line break, so a short composer line is
// read together with the line above it.
func showsTail(s backends.Screen, tail string) bool {
	if tail == "" {
		return false
	}
	line, above := composerLine(s)
	line = trimFrame(line)
	if strings.HasSuffix(line, tail) {
		return true
	}
	trimmed := strings.TrimLeft(line, " \t│┃║|")
	if trimmed != "" && utf8.RuneCountInString(trimmed) < utf8.RuneCountInString(tail) {
		return strings.HasSuffix(trimFrame(above)+trimmed, tail)
	}
	return false
}

// Classify compares the screen now with the screen before typing and the
// screen just after the text showed up.
func Classify(before, typed, now backends.Screen, beforeKnown bool, tail string) ComposerState {
	typedLine, _ := composerLine(typed)
	beforeLine, _ := composerLine(before)
	nowLine, _ := composerLine(now)
	typedChanged := beforeKnown && typedLine != beforeLine
	typedSeen := showsTail(typed, tail) || typedChanged
	// Without a cursor the composer is only a guess (the last non-empty
	// line), and once the text is submitted its echo in the transcript can
	// be that line. So there the tail counts as held only on the very line
	// the composer showed when the text was typed.
	tailHeld := showsTail(now, tail) && (now.Cursor || nowLine == typedLine)
	if tailHeld || (typedChanged && nowLine == typedLine) {
		return Holding
	}
	if typedSeen {
		return Cleared
	}
	return Unknown
}

// Echoed reports whether the typed text has reached the screen.
func Echoed(before, now backends.Screen, beforeKnown bool, tail string) bool {
	if showsTail(now, tail) {
		return true
	}
	b, _ := composerLine(before)
	n, _ := composerLine(now)
	return beforeKnown && b != n
}

// promptGlyphs frame a composer or mark its prompt; they are not input.
const promptGlyphs = " \t│┃║|>›❯»"

// HeldInput is the text the composer provably holds: what sits left of the
// cursor on the cursor's row, past the composer's frame and prompt. Typed
// input ends at the cursor, while a placeholder or suggestion is drawn after
// it, so only the left part counts. Without a known cursor column it is ""
// (nothing proven), never a guess.
func HeldInput(s backends.Screen) string {
	if !s.Cursor || s.CursorX <= 0 || s.CursorY < 0 || s.CursorY >= len(s.Lines) {
		return ""
	}
	var left []rune
	col := 0
	for _, r := range s.Lines[s.CursorY] {
		if col >= s.CursorX {
			break
		}
		left = append(left, r)
		col += cellWidth(r)
	}
	return strings.TrimSpace(strings.TrimLeft(string(left), promptGlyphs))
}

// cellWidth is a rune's terminal width: 2 for the East Asian wide and emoji
// ranges, 1 otherwise. It only has to keep the cursor column from reaching
// past the typed text into a placeholder.
func cellWidth(r rune) int {
	switch {
	case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF, r >= 0xAC00 && r <= 0xD7A3,
		r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F, r >= 0xFF00 && r <= 0xFF60,
		r >= 0xFFE0 && r <= 0xFFE6, r >= 0x1F300 && r <= 0x1FAFF, r >= 0x20000:
		return 2
	}
	return 1
}
