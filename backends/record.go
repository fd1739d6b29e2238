package backends

import (
	"regexp"
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

// processID is a recorded pid (tmux_pane_pid, pane_pid): a positive decimal.
var processID = regexp.MustCompile(`^[1-9][0-9]*$`)

// ValidPID reports whether a recorded pid (tmux_pane_pid, pane_pid) is a
// positive decimal.
func ValidPID(s string) bool { return processID.MatchString(s) }
