// Package termtext makes text an agent's pane holds safe to print: every
// terminal control sequence is removed, so bytes an agent box wrote (an OSC 52
// clipboard write, a tmux passthrough, a title change) are data for the
// caller, never commands to the caller's terminal.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// C1 controls, in their 8-bit form (a lone byte) or as U+0080..U+009F.
const (
	c1DCS = 0x90
	c1SOS = 0x98
	c1CSI = 0x9b
	c1ST  = 0x9c
	c1OSC = 0x9d
	c1PM  = 0x9e
	c1APC = 0x9f
)

const (
	esc = 0x1b
	bel = 0x07
	can = 0x18 // CAN and SUB abort any sequence in progress, as on a VT
	sub = 0x1a
)

type mode int

const (
	ground   mode = iota
	escape        // after ESC
	escInter      // ESC and intermediates, waiting for the final byte
	csi           // control sequence: parameters, intermediates, final
	oscStr        // operating system command: ends at ST or BEL
	dcsStr        // device control string (tmux passthrough): ends at ST only
	otherStr      // SOS, PM, APC: end at ST
	strEsc        // ESC inside a string: ST if '\' follows
)

// Strip returns s with every control sequence (CSI, OSC, DCS, SOS, PM, APC,
// other ESC sequences, in 7-bit and 8-bit forms) and every control character
// but newline and tab removed. Invalid UTF-8 becomes U+FFFD. An unterminated
// sequence swallows the rest of the input, as the terminal would.
func Strip(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	m, inStr := ground, ground
	for i := 0; i < len(s); {
		r, size := decode(s[i:])
		i += size
		m, inStr = step(&b, m, inStr, r)
	}
	return b.String()
}

// decode reads one character; a lone byte 0x80..0x9f (not valid UTF-8) is
// the 8-bit form of a C1 control and reads as that control.
func decode(s string) (rune, int) {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 && s[0] >= 0x80 && s[0] <= 0x9f {
		return rune(s[0]), 1
	}
	return r, size
}

// step feeds one character through the sequence parser, writing it when it
// is text. inStr remembers which string an ESC inside one belongs to.
func step(b *strings.Builder, m, inStr mode, r rune) (mode, mode) {
	if (r == can || r == sub) && m != ground {
		return ground, ground
	}
	switch m {
	case ground:
		return ground0(b, r), ground
	case escape:
		return afterEsc(b, r), ground
	case escInter:
		switch {
		case r >= 0x20 && r <= 0x2f:
			return escInter, ground
		case r >= 0x30 && r <= 0x7e:
			return ground, ground
		}
		return reground(b, r), ground
	case csi:
		switch {
		case r >= 0x20 && r <= 0x3f:
			return csi, ground
		case r >= 0x40 && r <= 0x7e:
			return ground, ground
		case r < 0x20 && r != esc:
			return csi, ground // a control inside CSI is executed, not shown
		}
		return reground(b, r), ground
	case oscStr, dcsStr, otherStr:
		switch {
		case r == c1ST:
			return ground, ground
		case r == bel && m == oscStr:
			return ground, ground
		case r == esc:
			return strEsc, m
		}
		return m, ground
	case strEsc:
		switch {
		case r == '\\':
			return ground, ground
		case inStr == dcsStr:
			// tmux passthrough doubles every ESC of its payload, so an
			// ESC that is not ST is payload.
			return dcsStr, ground
		}
		// Elsewhere an ESC ends the string and starts a new sequence.
		return afterEsc(b, r), ground
	}
	return ground, ground
}

// reground ends a malformed sequence at r and reads r as if in ground.
func reground(b *strings.Builder, r rune) mode {
	if r == esc {
		return escape
	}
	return ground0(b, r)
}

func ground0(b *strings.Builder, r rune) mode {
	switch {
	case r == esc:
		return escape
	case r == c1CSI:
		return csi
	case r == c1OSC:
		return oscStr
	case r == c1DCS:
		return dcsStr
	case r == c1SOS || r == c1PM || r == c1APC:
		return otherStr
	case r == '\n' || r == '\t':
		b.WriteRune(r)
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		// other C0, DEL and C1 controls are dropped
	default:
		b.WriteRune(r) // RuneError writes U+FFFD
	}
	return ground
}

func afterEsc(b *strings.Builder, r rune) mode {
	switch {
	case r == '[':
		return csi
	case r == ']':
		return oscStr
	case r == 'P':
		return dcsStr
	case r == 'X' || r == '^' || r == '_':
		return otherStr
	case r == esc:
		return escape
	case r >= 0x20 && r <= 0x2f:
		return escInter
	case r >= 0x30 && r <= 0x7e:
		return ground // a two-character sequence (ESC 7, ESC c, a lone ST)
	}
	// A lone ESC before a control or non-ASCII character: drop the ESC,
	// keep what follows.
	return ground0(b, r)
}
