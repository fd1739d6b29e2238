package backends

import (
	"strings"

	"fmctl/state"
)

// RecordEndpoint is the endpoint task id's record names.
func RecordEndpoint(id string, r state.Record) Endpoint {
	return Endpoint{Backend: r.Backend(), Target: r.Window(), TaskID: id, Worktree: r.Worktree(), Fields: r.Map()}
}

// ValidAtom is the character set an endpoint part may use (a tmux session
// or window name, a zellij session, a herdr id part).
func ValidAtom(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("._@%+-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ValidPID reports whether a recorded pid (tmux_pane_pid, pane_pid) is a
// positive decimal. Checked by hand, not by a regexp: a regexp compiled at
// start-up costs every invocation, and these checks sit on the key path.
func ValidPID(s string) bool { return s != "" && s[0] != '0' && Digits(s) }

// Digits reports whether s is one or more ASCII decimal digits.
func Digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
