// Package phrase builds the parts of a user-facing sentence that more than
// one layer writes: a list joined with "or", and the did-you-mean clause
// for a word close to one expected.
package phrase

import "strings"

// Close reports whether want is a plausible misspelling of word: within one
// edit per three characters of word, a swap of two neighbours counting as
// one edit ("hgih" is one slip from "high", "Ecsape" from "Escape"). urfave
// suggests its nearest flag however far it is; a far one would mislead.
func Close(word, want string) bool {
	if want == "" || word == want {
		return false
	}
	return editDistance(word, want) <= len(word)/3
}

// Nearest is the candidate word most plausibly meant (see Close), the first
// of the nearest on a tie; "" when none is close or word is one of them.
func Nearest(word string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		if c == word {
			return ""
		}
		if !Close(word, c) {
			continue
		}
		if d := editDistance(word, c); bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// DidYouMean is the clause a usage error ends with when a candidate is
// close to what was typed ("; did you mean claude?"), else "".
func DidYouMean(word string, candidates []string) string {
	if s := Nearest(word, candidates); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}

// editDistance is the optimal-string-alignment distance (Levenshtein plus
// the transposition of two adjacent bytes), on bytes: every value it
// compares (flags, verbs, harness and backend names, keys, task ids) is
// ASCII.
func editDistance(a, b string) int {
	// rows i-2, i-1 and i of the table
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// OneOf lists the values a flag takes and, when one is close to the value
// given, the one probably meant: "one of a, b, c; did you mean b?".
func OneOf(value string, values []string) string {
	return "one of " + strings.Join(values, ", ") + DidYouMean(value, values)
}
