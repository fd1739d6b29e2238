// Package remote talks to another host's fmctl: it runs the user's own ssh
// (one multiplexed connection per host), starts `fm-control serve` there,
// held across invocations by a local keeper process per host (keeper.go),
// and exchanges the JSON lines of protocol.go with it. It decides nothing about verbs; it carries
// them and says, when a call fails, whether the request can have reached
// the other side.
package remote

import (
	"slices"
)

// Protocol is the version of the lines below. Both sides name theirs in
// the hello and refuse any other: a changed line is a new version.
const Protocol = 1

// MaxLine bounds one line either side reads: a message is at most 1 MiB
// (fm-send's limit), and read's text or a list of every task fits easily.
const MaxLine = 16 << 20

// Hello is the first line `fm-control serve` writes, before reading any
// request: the client checks it, so a mismatched host is refused before
// anything is sent.
type Hello struct {
	Serve    string `json:"serve"` // always "fmctl"
	Protocol int    `json:"protocol"`
	Version  string `json:"version"` // the remote binaries' build version
	Arch     string `json:"arch"`    // GOOS/GOARCH of the remote binaries
}

// HelloServe is Hello.Serve's one value.
const HelloServe = "fmctl"

// Request is one verb to run there: the argv of fm-send, fm-control or
// fm-spawn, as the user's command line would be with the task's bare id.
type Request struct {
	Protocol int      `json:"protocol"`
	ID       string   `json:"request"`
	Argv     []string `json:"argv"`
	// Stdin is what the verb reads on standard input (fm-send <id> -).
	Stdin []byte `json:"stdin,omitempty"`
	// Files are the contents of the files FileFlags named on this
	// machine's command line, by flag: the serve writes each to a private
	// file there and passes the verb --<flag>=<that file>.
	Files map[string][]byte `json:"files,omitempty"`
	// TimeoutMS bounds the verb there; the serve kills it past this.
	TimeoutMS int64 `json:"timeout_ms"`
}

// A Request with no Argv is a ping: the serve answers it with its id and
// runs nothing (a serve of before the ping answered it refused, which
// proves as much). A keeper pings a held serve before sending a request on
// it, so a serve that died or a path that broke while it was held costs
// "nothing was sent", not an answer lost.

// Response is the verb's outcome: its exit code and what it printed.
type Response struct {
	ID     string `json:"request"`
	Exit   int    `json:"exit"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// Replayed: the request id had been seen, and this is the outcome
	// remembered from then; nothing was run again.
	Replayed bool `json:"replayed,omitempty"`
	// Refused is set when serve itself refused the request (a binary it
	// does not run, a protocol it does not speak); Stderr says why.
	Refused bool `json:"refused,omitempty"`
}

// FileFlags are the flags that name a file on the caller's machine (a
// brief, a progress note): their content travels in Request.Files.
var FileFlags = []string{"brief", "note-file"}

// Binaries are the programs a request may name.
var Binaries = []string{"fm-send", "fm-control", "fm-spawn", "fm-teardown"}

// readOnlyVerbs are the fm-control verbs that change nothing: a lost
// answer to one is no more than an unanswered question.
var readOnlyVerbs = []string{"status", "list", "wait", "read", "capabilities"}

// Mutates reports whether argv may change something on the host (types
// into an agent, stops or launches one, rewrites a record): such a request
// is remembered by its id, and an answer lost after it was sent is
// "unconfirmed", never a guess. Anything not known to be read-only is
// counted as a mutation.
func Mutates(argv []string) bool {
	if len(argv) < 2 || argv[0] != "fm-control" {
		return true
	}
	for _, a := range argv[1:] {
		if a == "--" {
			break
		}
		if len(a) > 0 && a[0] != '-' {
			return !slices.Contains(readOnlyVerbs, a)
		}
	}
	return true
}
