package deliver

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// FromFirstmateMark prefixes every message to a secondmate: the label, then
// U+2063 INVISIBLE SEPARATOR (E2 81 A3), so the secondmate routes its reply
// through the status path rather than into a chat nobody reads.
const FromFirstmateMark = "[fm-from-firstmate]\u2063"

// Mark prefixes the routing marker once; already-marked text is unchanged.
func Mark(text string) string {
	if strings.HasPrefix(text, FromFirstmateMark) {
		return text
	}
	return FromFirstmateMark + text
}

// ErrEmptyText is CheckText's refusal of a message with nothing to send: a
// command-line mistake (fm-send t1 ""), not a failed delivery.
var ErrEmptyText = errors.New("the message is empty; pass the text to send")

// CheckText refuses text that cannot be delivered as plain conversation: an
// escape or other control byte would reach the agent as a key press (an ESC
// interrupts it), and a NUL cannot travel in an argv. CRLF becomes LF.
func CheckText(text string) (string, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if strings.TrimSpace(text) == "" {
		return "", ErrEmptyText
	}
	for i, r := range text {
		if r == '\n' || r == '\t' {
			continue
		}
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(text[i:]); size == 1 {
				return "", fmt.Errorf("the message is not valid UTF-8 at byte %d", i)
			}
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return "", fmt.Errorf("the message holds control character 0x%02x at byte %d; fm-send delivers text only (use fm-send --key or fm-control for keys)", r, i)
		}
	}
	return text, nil
}
