package backends

import (
	"regexp"
	"testing"
)

// ValidPID and Digits are hand-written so that nothing compiles a regexp at
// start-up; they must accept exactly what the regexps they replaced did.
func TestHandMatchersAgreeWithRegexps(t *testing.T) {
	pid := regexp.MustCompile(`^[1-9][0-9]*$`)
	digits := regexp.MustCompile(`^[0-9]+$`)
	for _, s := range []string{"", "0", "00", "1", "9", "10", "0123", "123", "12a", "a12", "-1", "+1", " 1", "1 ", "１", "4294967296", "1\n"} {
		if got, want := ValidPID(s), pid.MatchString(s); got != want {
			t.Errorf("ValidPID(%q) = %v, the regexp says %v", s, got, want)
		}
		if got, want := Digits(s), digits.MatchString(s); got != want {
			t.Errorf("Digits(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}
