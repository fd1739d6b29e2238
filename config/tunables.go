package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"fmctl/phrase"
)

// Unit says how a variable's value is read.
type Unit string

const (
	// UnitDuration is seconds ("2.5", the original toolkit's form) or a Go
	// duration ("500ms"), from 0 to 24h; a bad value is a BadValue.
	UnitDuration Unit = "duration"
	// UnitCount is a non-negative integer; a bad value is a BadValue.
	UnitCount Unit = "count"
	// UnitBool is on when the value is "1".
	UnitBool Unit = "bool"
	// UnitPath is a file or directory, taken as given.
	UnitPath Unit = "path"
	// UnitName is a word: a backend, a session, a socket, an id.
	UnitName Unit = "name"
)

// Tunables are every FM_* variable's value for one run of a binary, read
// once at its edge (ReadTunables) and passed down; no other code reads an
// FM_* variable. Each field is bound by exactly one row of the table.
type Tunables struct {
	Home    HomeVars
	Mux     MuxVars
	Send    SendVars
	Control ControlVars
	Spawn   SpawnVars
	Hosts   HostVars
	// GitTimeout bounds one git call.
	GitTimeout time.Duration
	// RunnerTrace names a file every external command is logged to.
	RunnerTrace string
	// Completion is set by the shell completion scripts fmctl prints.
	Completion bool
	// AuditMaxBytes bounds a task's audit trail (state/<id>.audit): past
	// it, the oldest lines go first.
	AuditMaxBytes int
	// EventKey is the key an agent's hook presents with its event: the
	// launch line reads it from state/<id>.event-key into the agent's
	// environment (harness.EventKeyEnv).
	EventKey string
}

// HomeVars name the home and the directories that replace its own.
type HomeVars struct {
	Root, StateOverride, DataOverride, ConfigOverride string
}

// MuxVars configure the multiplexer adapters.
type MuxVars struct {
	Timeout                             time.Duration
	TmuxBin, TmuxSocket, TmuxSocketPath string
	TmuxSession                         string
	HerdrBin                            string
	ZellijBin, ZellijSession            string
}

// SendVars bound a delivery (fm-send, and the keys fm-control sends).
type SendVars struct {
	LockWait, Sleep, Poll, ReadyWait time.Duration
	// RecordWait bounds the wait for the agent's own record to show a
	// submitted message; RecordPoll caps the poll of that wait.
	RecordWait, RecordPoll time.Duration
	Retries                int
}

// ControlVars bound fm-control's verbs.
type ControlVars struct {
	Poll, SettleWait, ExitWait, LaunchWait time.Duration
	// CancelWait bounds how long an interrupt watches the agent's own
	// record for its turn to end, over every round of keys.
	CancelWait time.Duration
	// RecordPoll is how often read --record --follow reads the agent's
	// own record again.
	RecordPoll  time.Duration
	ExitRetries int
	// Watch and StatePoll pace the verbs that wait on a task (wait, read
	// --follow, list --watch): the longest pause between two reads of the
	// multiplexer, and the stat of the state files within it.
	Watch, StatePoll time.Duration
	// ReportLag is how long after a submit an older idle report gives
	// way to a record showing that message's turn running.
	ReportLag time.Duration
	// ReadyWait bounds exit's wait for a starting agent's composer to be
	// drawn before its exit command is typed.
	ReadyWait time.Duration
	// StallAfter is how long a busy agent may show no progress before
	// status, list and wait call it stalled; 0 never does.
	StallAfter time.Duration
	// Wait is FM_CONTROL_WAIT as given: a bad value is refused by the wait
	// verb, naming the variable, rather than silently replaced.
	Wait string
}

// SpawnVars configure fm-spawn.
type SpawnVars struct {
	Backend        string
	Wait, PathWait time.Duration
	RelaunchTx     string
}

// HostVars bound the calls to other hosts (config/hosts.toml).
type HostVars struct {
	SSHConfig                   string
	ConnectTimeout, CallTimeout time.Duration
	ListTimeout                 time.Duration
	// Keep is how long a host's keeper stays up idle; 0 runs none.
	Keep time.Duration
	// RequestID is the id a remote mutation carries instead of a fresh
	// one: an unconfirmed call's, to retry it without acting twice.
	RequestID string
}

// Tunable is one FM_* variable: its row in docs/config.md and in
// `fm-control capabilities --json`.
type Tunable struct {
	Name    string
	Default string // in the form Value prints; "" is none
	Unit    Unit
	Doc     string // what it bounds or chooses
	// NonZero: 0 keeps the default too, since an unbounded call is what the
	// variable exists to prevent.
	NonZero bool
	// Secret: the value is a credential, never printed (Value says only
	// whether it is set).
	Secret bool
	// field is where the value is read into: a *time.Duration, *int,
	// *string or *bool inside a Tunables.
	field func(*Tunables) any
}

// CompletionVar is named in the completion scripts fmctl prints, which set it.
const CompletionVar = "FM_COMPLETION"

// table is every FM_* variable fmctl reads. The fault seams of a test build
// (FM_TEST_FAULT, FM_TEST_CRASH, state/inject_on.go) are not here: release
// binaries do not have them.
var table = []Tunable{
	{Name: "FM_HOME", Unit: UnitPath, Doc: "the firstmate home: its state/, data/ and config/; required", field: func(t *Tunables) any { return &t.Home.Root }},
	{Name: "FM_STATE_OVERRIDE", Unit: UnitPath, Doc: "the state directory (records, journals, locks) in place of $FM_HOME/state", field: func(t *Tunables) any { return &t.Home.StateOverride }},
	{Name: "FM_DATA_OVERRIDE", Unit: UnitPath, Doc: "the data directory (briefs) in place of $FM_HOME/data", field: func(t *Tunables) any { return &t.Home.DataOverride }},
	{Name: "FM_CONFIG_OVERRIDE", Unit: UnitPath, Doc: "the config directory in place of $FM_HOME/config", field: func(t *Tunables) any { return &t.Home.ConfigOverride }},

	{Name: "FM_BACKEND", Unit: UnitName, Doc: "the backend a new task runs on (tmux, herdr or zellij) when --backend names none; wins over config/", field: func(t *Tunables) any { return &t.Spawn.Backend }},
	{Name: "FM_MUX_TIMEOUT", Unit: UnitDuration, Default: "5s", NonZero: true, Doc: "one multiplexer call; 0 keeps the default", field: func(t *Tunables) any { return &t.Mux.Timeout }},
	{Name: "FM_TMUX_BIN", Unit: UnitPath, Doc: "the tmux executable; unset, the one on PATH", field: func(t *Tunables) any { return &t.Mux.TmuxBin }},
	{Name: "FM_TMUX_SOCKET", Unit: UnitName, Doc: "the tmux server's socket name (tmux -L)", field: func(t *Tunables) any { return &t.Mux.TmuxSocket }},
	{Name: "FM_TMUX_SOCKET_PATH", Unit: UnitPath, Doc: "the tmux server's socket path (tmux -S)", field: func(t *Tunables) any { return &t.Mux.TmuxSocketPath }},
	{Name: "FM_TMUX_SESSION", Unit: UnitName, Doc: "the tmux session new task windows go into; wins over [tmux] session, which wins over the caller's session, then firstmate", field: func(t *Tunables) any { return &t.Mux.TmuxSession }},
	{Name: "FM_HERDR_BIN", Unit: UnitPath, Doc: "the herdr executable; unset, the one on PATH", field: func(t *Tunables) any { return &t.Mux.HerdrBin }},
	{Name: "FM_ZELLIJ_BIN", Unit: UnitPath, Doc: "the zellij executable; unset, the one on PATH", field: func(t *Tunables) any { return &t.Mux.ZellijBin }},
	{Name: "FM_ZELLIJ_SESSION", Unit: UnitName, Doc: "the zellij session new task tabs go into; wins over [zellij] session, which wins over firstmate", field: func(t *Tunables) any { return &t.Mux.ZellijSession }},
	{Name: "FM_GIT_TIMEOUT", Unit: UnitDuration, Default: "60s", NonZero: true, Doc: "one git call (a fetch over a slow network is the longest); 0 keeps the default", field: func(t *Tunables) any { return &t.GitTimeout }},

	{Name: "FM_SEND_LOCK_WAIT", Unit: UnitDuration, Default: "60s", Doc: "the wait for a task's input lock, held by another delivery or lifecycle verb, and a text send's wait for the send before it to be judged", field: func(t *Tunables) any { return &t.Send.LockWait }},
	{Name: "FM_SEND_READY_WAIT", Unit: UnitDuration, Default: "20s", Doc: "fm-send's wait for a starting agent's composer to be ready", field: func(t *Tunables) any { return &t.Send.ReadyWait }},
	{Name: "FM_SEND_SLEEP", Unit: UnitDuration, Default: "0.4s", Doc: "how long each Enter gets to show its effect on the composer", field: func(t *Tunables) any { return &t.Send.Sleep }},
	{Name: "FM_SEND_RECORD_WAIT", Unit: UnitDuration, Default: "15s", Doc: "how long fm-send waits for the agent's own record (transcript, rollout, database, session file) to show the submitted message before it says submit=unrecorded", field: func(t *Tunables) any { return &t.Send.RecordWait }},
	{Name: "FM_SEND_RECORD_POLL", Unit: UnitDuration, Default: "0.05s", Doc: "the cap of the poll of the agent's record while fm-send waits for it to show the message (from 10 ms, doubling): fm-send answers at most this long after the agent records it, and each look reads the record once", field: func(t *Tunables) any { return &t.Send.RecordPoll }},
	{Name: "FM_SEND_RETRIES", Unit: UnitCount, Default: "3", Doc: "extra Enter presses while the sent text is provably still held", field: func(t *Tunables) any { return &t.Send.Retries }},
	{Name: "FM_SEND_POLL", Unit: UnitDuration, Default: "0.01s", Doc: "the poll while fm-send waits for a ready composer, and the cap of a submit's polls (which start at 10 ms and double) when above 100 ms", field: func(t *Tunables) any { return &t.Send.Poll }},

	{Name: "FM_CONTROL_POLL", Unit: UnitDuration, Default: "0.05s", Doc: "the cap of the poll interval of a lifecycle verb's waits (interrupt, exit, relaunch), which starts at 10 ms and doubles: the verb answers at most this long after the agent acts", field: func(t *Tunables) any { return &t.Control.Poll }},
	{Name: "FM_CONTROL_SETTLE_WAIT", Unit: UnitDuration, Default: "5s", Doc: "how long an interrupt watches for the agent to acknowledge it (its turn ending)", field: func(t *Tunables) any { return &t.Control.SettleWait }},
	{Name: "FM_CONTROL_CANCEL_WAIT", Unit: UnitDuration, Default: "3s", Doc: "how long an interrupt watches the agent's own record (transcript, rollout, database, session file) for its turn to end, over every round of interrupt keys; a turn still running after it is exit 3", field: func(t *Tunables) any { return &t.Control.CancelWait }},
	{Name: "FM_CONTROL_EXIT_WAIT", Unit: UnitDuration, Default: "30s", Doc: "how long an exit command gets to stop the agent", field: func(t *Tunables) any { return &t.Control.ExitWait }},
	{Name: "FM_CONTROL_EXIT_RETRIES", Unit: UnitCount, Default: "3", Doc: "Enter retries for the exit command", field: func(t *Tunables) any { return &t.Control.ExitRetries }},
	{Name: "FM_CONTROL_READY_WAIT", Unit: UnitDuration, Default: "20s", Doc: "how long exit (and relaunch's stop) waits for a starting agent to draw its composer before typing its exit command: a TUI not yet drawn drops what is typed, or keeps it as a draft; past it nothing is typed", field: func(t *Tunables) any { return &t.Control.ReadyWait }},
	{Name: "FM_CONTROL_LAUNCH_WAIT", Unit: UnitDuration, Default: "90s", Doc: "how long a relaunched agent gets to come up ready", field: func(t *Tunables) any { return &t.Control.LaunchWait }},
	{Name: "FM_CONTROL_REPORT_LAG", Unit: UnitDuration, Default: "15s", Doc: "how long after fmctl submits a message an idle report from before it gives way to the agent's record showing that message's turn running: gemini records a prompt before its hook reports busy, seconds later under load; past it the report stands, so a slash command that starts no turn cannot hold a task busy; 0 always believes the report", field: func(t *Tunables) any { return &t.Control.ReportLag }},
	{Name: "FM_CONTROL_RECORD_POLL", Unit: UnitDuration, Default: "0.5s", Doc: "how often `read --record --follow` reads the agent's own record again: each read parses the whole record (opencode's through a sqlite3 call), and a conversation is read by a person", field: func(t *Tunables) any { return &t.Control.RecordPoll }},
	{Name: "FM_CONTROL_WAIT", Unit: UnitDuration, Default: "30s", Doc: "fm-control wait's limit when --timeout is not given", field: func(t *Tunables) any { return &t.Control.Wait }},
	{Name: "FM_WATCH_POLL", Unit: UnitDuration, Default: "2s", NonZero: true, Doc: "the longest wait, read --follow and list --watch go between two reads of the multiplexer while nothing changes (each read starts multiplexer clients, the most of an idle waiter's cost: docs/performance.md); what only the screen shows (a dialog with no hook) is seen within it; a change in the task's state files ends the pause at once; 0 keeps the default", field: func(t *Tunables) any { return &t.Control.Watch }},
	{Name: "FM_STATE_POLL", Unit: UnitDuration, Default: "0.1s", NonZero: true, Doc: "how often those waiting verbs stat the task's state files (no process is started, but each wake-up costs), so an agent's own report ends their pause within it; 0 keeps the default", field: func(t *Tunables) any { return &t.Control.StatePoll }},
	{Name: "FM_STALL_AFTER", Unit: UnitDuration, Default: "600s", Doc: "how long a busy agent may show no progress (its own record unwritten, no report from it) before status, list and wait call it stalled (attention=stalled; wait exits 5): the longest quiet of a healthy turn, a long tool call or a model thinking, with margin, so a hung turn or a retry back-off that never ends surfaces; 0 never calls an agent stalled", field: func(t *Tunables) any { return &t.Control.StallAfter }},
	{Name: "FM_CONTROL_RELAUNCH_TX", Unit: UnitName, Doc: "the relaunch transaction an fm-spawn --relaunch belongs to, published in the new record", field: func(t *Tunables) any { return &t.Spawn.RelaunchTx }},

	{Name: "FM_SPAWN_WAIT", Unit: UnitDuration, Default: "30s", Doc: "how long a spawned agent gets to come up ready", field: func(t *Tunables) any { return &t.Spawn.Wait }},
	{Name: "FM_SPAWN_PATH_WAIT", Unit: UnitDuration, Default: "5s", Doc: "how long a new endpoint's shell gets to report its directory", field: func(t *Tunables) any { return &t.Spawn.PathWait }},

	{Name: "FM_SSH_CONFIG", Unit: UnitPath, Doc: "an ssh_config file every ssh call to a host uses (ssh -F); unset, ssh's own", field: func(t *Tunables) any { return &t.Hosts.SSHConfig }},
	{Name: "FM_SSH_CONNECT_TIMEOUT", Unit: UnitDuration, Default: "10s", NonZero: true, Doc: "ssh's ConnectTimeout, and the wait for a host's fmctl to answer its hello; 0 keeps the default", field: func(t *Tunables) any { return &t.Hosts.ConnectTimeout }},
	{Name: "FM_REMOTE_TIMEOUT", Unit: UnitDuration, Default: "120s", NonZero: true, Doc: "one verb on another host, from its request to its answer (wait adds its own --timeout); 0 keeps the default", field: func(t *Tunables) any { return &t.Hosts.CallTimeout }},
	{Name: "FM_HOSTS_LIST_TIMEOUT", Unit: UnitDuration, Default: "8s", NonZero: true, Doc: "list --all-hosts: each host's answer; a host slower than this is listed unreachable; 0 keeps the default", field: func(t *Tunables) any { return &t.Hosts.ListTimeout }},
	{Name: "FM_HOSTS_KEEP", Unit: UnitDuration, Default: "600s", Doc: "how long a host's keeper (the local process holding one fm-control serve there across invocations, see docs/hosts.md) stays up with no caller; 0 runs no keeper, and each invocation starts a serve of its own", field: func(t *Tunables) any { return &t.Hosts.Keep }},
	{Name: "FM_REQUEST_ID", Unit: UnitName, Doc: "the request id a verb on another host carries; set it to the id an unconfirmed call printed to retry that call: the host answers from memory instead of acting twice", field: func(t *Tunables) any { return &t.Hosts.RequestID }},

	{Name: "FM_RUNNER_TRACE", Unit: UnitPath, Doc: "a file every external command is appended to, with its duration (diagnostics, benchmarks)", field: func(t *Tunables) any { return &t.RunnerTrace }},
	{Name: "FM_AUDIT_MAX_BYTES", Unit: UnitCount, Default: "262144", Doc: "the size a task's audit trail (state/<id>.audit) is kept under: past it the oldest lines are dropped, keeping about half; 0 keeps every line", field: func(t *Tunables) any { return &t.AuditMaxBytes }},
	{Name: "FM_EVENT_KEY", Unit: UnitName, Secret: true, Doc: "the event key a task's agent presents with its hook events (agent-event); set by the launch line from state/<id>.event-key, never by hand", field: func(t *Tunables) any { return &t.EventKey }},
	{Name: CompletionVar, Unit: UnitBool, Default: "0", Doc: "set to 1 by the shell completion scripts: the last word --generate-shell-completion asks for completions", field: func(t *Tunables) any { return &t.Completion }},
}

// BadValue is an FM_* variable set to a value its unit refuses. A binary
// refuses to run with one (exit 2, naming it) rather than act on the
// default the user did not choose.
type BadValue struct {
	Name, Value string
	// Why says what the unit takes: "not a count: give ...".
	Why string
	// Default is what the variable takes when unset.
	Default string
}

func (b BadValue) Error() string {
	// The value is cut short so the error stays one short line.
	v := []rune(phrase.Printable(b.Value))
	if len(v) > 40 {
		v = append(v[:40], []rune("...")...)
	}
	return fmt.Sprintf("%s '%s' is %s", b.Name, string(v), b.Why)
}

// ReadTunables reads every FM_* variable from env, once. A variable unset
// (or blank) takes the table's default; one set to a value its unit refuses
// takes it too, and is returned among the bad values, in table order, for
// the binary's edge to refuse.
func ReadTunables(env Env) (Tunables, []BadValue) {
	var t Tunables
	var bad []BadValue
	for _, row := range table {
		raw := env(row.Name)
		if err := row.read(&t, raw); err != nil {
			bad = append(bad, BadValue{Name: row.Name, Value: raw, Why: err.Error(), Default: row.Default})
		}
	}
	return t, bad
}

// DefaultTunables are the values with no FM_* variable set.
func DefaultTunables() Tunables {
	t, _ := ReadTunables(func(string) string { return "" })
	return t
}

// read sets row's field in t from raw, or from the default when raw is
// blank or refused; a refused value is the error.
func (row Tunable) read(t *Tunables, raw string) error {
	given := strings.TrimSpace(raw) != ""
	switch p := row.field(t).(type) {
	case *time.Duration:
		*p, _ = ParseWait(row.Default)
		if !given {
			return nil
		}
		d, err := ParseWait(raw)
		if err != nil {
			return err
		}
		if d > 0 || !row.NonZero {
			*p = d
		}
	case *int:
		*p, _ = strconv.Atoi(row.Default)
		if !given {
			return nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || n < 0 {
			return errors.New("not a count: give a whole number, 0 or more")
		}
		*p = n
	case *bool:
		*p = orValue(raw, row.Default) == "1"
	case *string:
		*p = orValue(raw, row.Default)
		if row.Unit == UnitDuration && given {
			// Kept as given (FM_CONTROL_WAIT: wait's own default when
			// --timeout is given), but a bad one is still refused.
			_, err := ParseWait(raw)
			return err
		}
	}
	return nil
}

// Value is the effective value of row in t, in the form its Default is
// written.
func (row Tunable) Value(t Tunables) string {
	switch p := row.field(&t).(type) {
	case *time.Duration:
		return formatWait(*p)
	case *int:
		return strconv.Itoa(*p)
	case *bool:
		if *p {
			return "1"
		}
		return "0"
	case *string:
		if row.Secret && *p != "" {
			return "(set)"
		}
		return *p
	}
	return ""
}

// formatWait writes a wait as seconds, the form the table's defaults use.
func formatWait(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

func orValue(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
