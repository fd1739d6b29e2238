package stubmodel

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The words a test puts in a prompt to pick what the model does with it.
// Only the newest user prompt counts: every CLI resends the whole
// conversation, so an older prompt's word must not steer a later turn.
const (
	// HangWord holds the request open until the client goes away: a busy
	// turn that produces nothing.
	HangWord = "fmhang"
	// LongWord streams text for N seconds (fmlong12; fmlong alone is
	// DefaultLong): a busy turn that draws.
	LongWord = "fmlong"
	// ToolWord followed by an absolute directory makes the model run the
	// CLI's shell tool (a command that writes ShellFile there), then its
	// file-writing tool (WriteFile), then reply. With a number (fmtool20
	// /dir) the command first sleeps that many seconds: a tool still
	// running.
	ToolWord = "fmtool"
	// EscalateWord beside ToolWord makes the shell call ask to run outside
	// the CLI's sandbox, as a model does (codex's exec_command with
	// sandbox_permissions "require_escalated"): codex in its ask mode
	// (on-request) raises its approval dialog only for such a call, and in
	// its auto mode does not run it.
	EscalateWord = "fmescalate"
	// RateWord answers N attempts with 429 and retry-after (fmrate3;
	// default 2), then serves the reply: the CLI's own back-off.
	RateWord = "fmrate"
	// OverloadWord answers N attempts with Anthropic's 529 overloaded (503
	// in the other dialects), then serves the reply.
	OverloadWord = "fmoverload"
	// ServerErrorWord answers N attempts with 500, then serves the reply.
	ServerErrorWord = "fm5xx"
	// CutWord starts the reply and resets the connection mid-stream on N
	// attempts (default 1), then serves the reply.
	CutWord = "fmcut"
	// DownWord makes the API unreachable for N seconds (default 10): the
	// listener closes, so new connections are refused and open ones reset.
	DownWord = "fmdown"
)

// Files the tool scenario's calls create in the prompt's directory.
const (
	ShellFile = "fm-shell.txt"
	WriteFile = "fm-write.txt"
)

// DefaultLong is how long fmlong streams without a number.
const DefaultLong = 30 * time.Second

// Kind is what the model does with one turn.
type Kind int

const (
	Reply Kind = iota
	Long
	ToolCalls
	RateLimit
	Overload
	ServerError
	Cut
	Down
	Hang
)

var kindNames = [...]string{"reply", "long", "tool", "rate-limit", "overload", "server-error", "cut", "down", "hang"}

func (k Kind) String() string { return kindNames[k] }

// Scenario is the turn a prompt asks for.
type Scenario struct {
	Kind     Kind
	Failures int           // attempts that fail before the reply is served
	Duration time.Duration // Long: how long to stream; Down: how long to refuse; ToolCalls: how long the command sleeps
	Dir      string        // ToolCalls: where the calls write
	Escalate bool          // ToolCalls: the shell call asks to leave the sandbox (EscalateWord)
}

var (
	wordRE = regexp.MustCompile(`\bfm(hang|long|tool|rate|overload|5xx|cut|down)(\d*)\b`)
	dirRE  = regexp.MustCompile(`\bfmtool\d*\s+(/[^\s"'\\]+)`)
)

// ParseScenario reads the first scenario word in prompt; a prompt without
// one gets a plain reply.
func ParseScenario(prompt string) Scenario {
	m := wordRE.FindStringSubmatch(prompt)
	if m == nil {
		return Scenario{Kind: Reply}
	}
	n, hasN := 0, m[2] != ""
	if hasN {
		n, _ = strconv.Atoi(m[2])
	}
	count := func(def int) int {
		if hasN {
			return n
		}
		return def
	}
	seconds := func(def time.Duration) time.Duration {
		if hasN {
			return time.Duration(n) * time.Second
		}
		return def
	}
	switch m[1] {
	case "hang":
		return Scenario{Kind: Hang}
	case "long":
		return Scenario{Kind: Long, Duration: seconds(DefaultLong)}
	case "tool":
		s := Scenario{Kind: ToolCalls, Duration: seconds(0)}
		if d := dirRE.FindStringSubmatch(prompt); d != nil {
			s.Dir = strings.TrimRight(d[1], ".,;:)")
		}
		s.Escalate = strings.Contains(prompt, EscalateWord)
		return s
	case "rate":
		return Scenario{Kind: RateLimit, Failures: count(2)}
	case "overload":
		return Scenario{Kind: Overload, Failures: count(2)}
	case "5xx":
		return Scenario{Kind: ServerError, Failures: count(2)}
	case "cut":
		return Scenario{Kind: Cut, Failures: count(1)}
	case "down":
		return Scenario{Kind: Down, Duration: seconds(10 * time.Second)}
	}
	return Scenario{Kind: Reply}
}
