package phrase

import "strings"

// OrList renders the values a setting accepts as prose ("a, b or c"), so a
// message lists them from the capability table rather than by hand.
func OrList(values []string) string {
	switch len(values) {
	case 0:
		return ""
	case 1:
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
