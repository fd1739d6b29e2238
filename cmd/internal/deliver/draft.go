package deliver

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode"

	"fmctl/state"
)

// ComposerDigest identifies text as a composer draws it, so what a
// composer holds can be matched to what fmctl typed without keeping the
// text (state.Typed): whitespace (where a long line wraps, a continuation
// row's indent, a newline), the ⏎ some composers draw for a newline, and
// invisible format characters (the routing marker's U+2063) are left out,
// since a screen drops or adds them. Text of nothing else is "".
func ComposerDigest(text string) string {
	var b strings.Builder
	for _, r := range text {
		if unicode.IsSpace(r) || r == '⏎' || unicode.Is(unicode.Cf, r) {
			continue
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// Typed is what this submit of text, typed at at, leaves for the next
// send to tell fmctl's own held text from a person's draft by: the text's
// digest, and whether the composer was seen to let go of it.
func (r Result) Typed(text string, at time.Time) state.Typed {
	if r.Replaced != "" {
		text = r.Replaced
	}
	return state.Typed{At: at.UnixNano(), Digest: ComposerDigest(text), Submitted: r.Verdict == Submitted || r.Verdict == Queued, Undrawn: r.Undrawn}
}
