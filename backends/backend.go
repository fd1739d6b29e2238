// Package backends is what every multiplexer adapter and every caller
// share: the Backend interface, its types and optional abilities, and the
// Runner every external program goes through. The adapters are packages of
// their own (backends/tmux, backends/herdr, backends/zellij), which only
// backends/mux imports; backends/proc is the process reading they share.
package backends

import (
	"context"
	"strings"

	"fmctl/harness"
)

// Env reads an environment variable.
type Env func(string) string

// Endpoint is where one task's agent runs, as its record names it.
type Endpoint struct {
	Backend  string            // tmux, herdr, zellij
	Target   string            // the record's window= value
	TaskID   string            // the task the endpoint belongs to
	Worktree string            // the recorded worktree (some classifiers use it)
	Fields   map[string]string // the whole record, for backend-specific keys (herdr_pane_id, zellij_pane_id, ...)
}

// Field returns a record field, or "".
func (e Endpoint) Field(key string) string { return e.Fields[key] }

// AgentState is a backend's verdict about what runs at an endpoint.
type AgentState string

const (
	StateAlive        AgentState = "alive"        // a verified harness process is in the foreground
	StateDead         AgentState = "dead"         // only a shell: the endpoint is agent-free
	StateMissing      AgentState = "missing"      // the endpoint is gone
	StateUnreadable   AgentState = "unreadable"   // the backend did not answer in a way we can trust
	StateUnattributed AgentState = "unattributed" // something runs that is neither a harness nor a shell
	StateSuspended    AgentState = "suspended"    // the agent is stopped (SIGTSTP), not gone
	StateDrifted      AgentState = "drifted"      // the recorded id is gone but one live endpoint carries the task's label
	StateUnverified   AgentState = "unverified"   // the backend has no recovery-grade classifier
)

// Observation is one read of an endpoint's agent state.
type Observation struct {
	State       AgentState
	Detail      string   // why, in a few words (names seen, backend error)
	Names       []string // process or agent names that decided it
	CurrentPath string   // the endpoint's current directory, when the read had it
	// AgentPID is the foreground agent process that decided alive, where
	// the backend read the endpoint's processes (0 otherwise): its
	// environment and directory locate the agent's own record.
	AgentPID int
	// AgentStatus is the multiplexer's own busy signal for a live agent:
	// herdr's agent_status (working, idle, blocked, done); "" where the
	// backend has none.
	AgentStatus string
	// Turn is AgentStatus read by the backend that owns its words.
	Turn Turn
	// NoServer: the read was unreadable because no server runs where fmctl
	// looked, so nothing runs there either (it may run elsewhere).
	NoServer bool
	// ServerGone: the endpoint is missing because the multiplexer server
	// (a zellij session) that held it is gone or was started anew, as
	// after a restart or a reboot; the recorded id may now be another's.
	ServerGone bool
}

// Screen is a capture of an endpoint's visible text.
type Screen struct {
	Lines   []string
	CursorY int  // row of the cursor within Lines
	Cursor  bool // whether CursorY is known
	// CursorX is the cursor's column on its row, where the backend reports
	// it (tmux); 0 otherwise, which claims nothing sits left of the cursor.
	CursorX int
}

// CreateSpec describes an endpoint to create for a task.
type CreateSpec struct {
	TaskID    string
	Label     string // fm-<id>
	Dir       string // working directory of the new endpoint's shell
	Container string // tmux session, herdr session, zellij session; "" = the backend's default
	// Workspace pins a herdr endpoint to this workspace id (a relaunch
	// recreating a dead pane where the record says); it is refused, not
	// replaced, when that workspace is gone.
	Workspace string
}

// Backend is one terminal multiplexer. Every method makes the fewest
// multiplexer calls the operation needs; all of them go through the Runner the
// adapter was built with.
type Backend interface {
	Name() string
	// SendText types text into the endpoint without submitting it. Text with a
	// newline (or long text) goes as one bracketed paste where the backend has one.
	SendText(ctx context.Context, ep Endpoint, text string) error
	// SendKey delivers one named key.
	SendKey(ctx context.Context, ep Endpoint, key harness.Key) error
	// Capture reads the visible screen and, where possible, the cursor row.
	Capture(ctx context.Context, ep Endpoint) (Screen, error)
	// AgentState classifies what runs at the endpoint.
	AgentState(ctx context.Context, ep Endpoint) Observation
	// CurrentPath is the endpoint shell's working directory.
	CurrentPath(ctx context.Context, ep Endpoint) (string, error)
	// Create makes a new endpoint and returns the record fields that name it
	// (window= and any backend-specific keys).
	Create(ctx context.Context, spec CreateSpec) ([]Field, error)
	// Kill removes an endpoint (used only to undo a Create that could not be recorded).
	Kill(ctx context.Context, ep Endpoint) error
	// ValidateRecord checks that a record's backend-specific fields have the shape
	// this backend needs, before anything is sent.
	ValidateRecord(ep Endpoint) error
}

// Field is one key=value pair for a record, in the order it should be written.
type Field struct {
	Key   string
	Value string
}

// Paster is an optional Backend ability: saying which texts SendText
// delivers as one bracketed paste rather than typed keys (an agent may
// treat the Enter after each differently).
type Paster interface {
	Pastes(text string) bool
}

// SendsAsPaste reports whether b's SendText delivers text as a bracketed
// paste. A backend that does not say is taken to paste, the case that
// waits longer before its Enter.
func SendsAsPaste(b Backend, text string) bool {
	p, ok := b.(Paster)
	return !ok || p.Pastes(text)
}

// pasteThreshold: longer text goes as a bracketed paste. Peers report long
// prompts typed through send-keys arriving truncated, and a paste reaches the
// agent as one message rather than one keystroke burst per line.
const pasteThreshold = 512

// NeedsPaste: multi-line or long text, or text holding a tab, goes as a
// bracketed paste where a backend can type text either way (tmux, herdr).
// Typed, a tab is the Tab key to an agent's TUI (opencode switches agents
// on it, claude toggles thinking), not text.
func NeedsPaste(text string) bool {
	return strings.ContainsAny(text, "\r\n\t") || len(text) > pasteThreshold
}

// CaptureTyper is an optional Backend ability: capture the screen and type
// text in one multiplexer call.
type CaptureTyper interface {
	CaptureThenType(ctx context.Context, ep Endpoint, text string) (Screen, error)
}

// StateCapturer is an optional Backend ability: read the agent state and
// the screen in one multiplexer call, for the reads that need both (status,
// each look of wait). The screen is only an answer where err is nil, and
// only of the endpoint's own pane where the observation attributes it.
type StateCapturer interface {
	AgentStateAndCapture(ctx context.Context, ep Endpoint) (Observation, Screen, error)
}

// KeyReader is an optional Backend ability: deliver a key and read the
// agent state right after it in one multiplexer call.
type KeyReader interface {
	SendKeyThenState(ctx context.Context, ep Endpoint, key harness.Key) (Observation, error)
}

// Turn is a multiplexer's own word on whether its agent is in a turn
// (herdr's agent_status), read by the adapter that owns the words.
type Turn string

const (
	TurnUnknown Turn = ""        // the backend has no such signal, or it could not be read
	TurnWorking Turn = "working" // a turn runs
	TurnBlocked Turn = "blocked" // a turn waits on the user (a permission prompt)
	TurnIdle    Turn = "idle"    // no turn runs
)

// Busy reports whether a turn runs or waits on the user: the agent must be
// interrupted before its exit command.
func (t Turn) Busy() bool { return t == TurnWorking || t == TurnBlocked }

// TurnReader is an optional Backend ability: read the multiplexer's own turn
// signal for the endpoint's agent in one call, cheap enough to poll (submit
// confirmation, waiting for a cancelled turn to end). TurnUnknown when it
// could not be read, or the endpoint holds no agent.
type TurnReader interface {
	Turn(ctx context.Context, ep Endpoint) Turn
}

// StatesReader is an optional Backend ability: classify many endpoints with
// one multiplexer call instead of one per endpoint, for a read of every
// task (fm-control list).
type StatesReader interface {
	AgentStates(ctx context.Context, eps []Endpoint) []Observation
}

// ScreensReader is an optional Backend ability: capture many endpoints'
// screens with one multiplexer call, for a read of every task (fm-control
// list). errs[i] is set where screens[i] could not be read.
type ScreensReader interface {
	Captures(ctx context.Context, eps []Endpoint) (screens []Screen, errs []error)
}

// StatesScreensReader is an optional Backend ability: StatesReader and
// ScreensReader at once, the screens read beside the classification
// rather than after it, for a read of every task (fm-control list).
// errs[i] is set where screens[i] is not endpoint i's screen; a screen is
// read for every endpoint where an agent runs (alive or unverified), and
// may be for others.
type StatesScreensReader interface {
	AgentStatesAndCaptures(ctx context.Context, eps []Endpoint) (obs []Observation, screens []Screen, errs []error)
}

// HistoryReader is an optional Backend ability: the endpoint's last lines,
// scrollback included, as plain text.
type HistoryReader interface {
	History(ctx context.Context, ep Endpoint, lines int) ([]string, error)
}

// StateHistoryReader is an optional Backend ability: the agent state and
// the endpoint's last lines (History's) in one multiplexer call, for each
// look of `read --follow`. The lines are only an answer where err is nil.
type StateHistoryReader interface {
	AgentStateAndHistory(ctx context.Context, ep Endpoint, lines int) (Observation, []string, error)
}

// LastLines splits text into lines and keeps the last n, trailing blank
// lines dropped first (a screen's unused rows are not the agent's output).
func LastLines(text string, n int) []string {
	rows := strings.Split(text, "\n")
	for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
		rows = rows[:len(rows)-1]
	}
	if len(rows) > n {
		rows = rows[len(rows)-n:]
	}
	return rows
}

// CallerSessionReader is an optional Backend ability: name the session
// holding the caller's own pane (tmux's TMUX_PANE), where a spawn from
// inside the multiplexer puts its endpoint unless one is configured.
type CallerSessionReader interface {
	CallerSession(ctx context.Context, pane string) (string, error)
}

// Pane is one live endpoint on a backend's server and what runs in it.
type Pane struct {
	ID    string      // the backend's own pane id (%N for tmux)
	Where string      // container:label, as a record's window= would name it
	Label string      // the window (tab) name
	Obs   Observation // what runs there
}

// Describe names a pane for a person: `%N in session:window`.
func (p Pane) Describe() string { return p.ID + " in " + p.Where }

// PaneFinder is an optional Backend ability: see every pane on the server,
// so a launch can prove no agent already works in a worktree, and a drifted
// record can be re-pointed at its pane.
type PaneFinder interface {
	// PanesIn lists the panes whose current directory is dir, classified.
	// An unreachable server has none.
	PanesIn(ctx context.Context, dir string) ([]Pane, error)
	// Claim makes p the endpoint labelled label (renaming its window back
	// when it was renamed) and returns the record fields that name it.
	Claim(ctx context.Context, p Pane, label string) ([]Field, error)
}

// Attacher is an optional Backend ability: the command line a person runs
// to watch an endpoint. fm-spawn may have started the multiplexer's server
// itself, on a socket or session the person never named, so its outcome
// says how to reach it.
type Attacher interface {
	AttachCommand(ep Endpoint) (string, bool)
}

// ShellLiner is an optional Backend ability used before a launch line is
// typed into a bare shell: empty the shell's input line, and read back the
// screen rows from the top down to the cursor's row (the input line is
// their tail; rows below the cursor, such as what an exiting agent printed
// there, are not read), so the launch is checked before it is submitted.
type ShellLiner interface {
	ClearShellLine(ctx context.Context, ep Endpoint) error
	ShellRows(ctx context.Context, ep Endpoint) ([]string, error)
}

// GatedKeySender is an optional Backend ability: send a key only when the
// gate accepts the agent state read right before it, in as few multiplexer
// calls as the backend can (tmux: one, checked server-side).
type GatedKeySender interface {
	SendKeyGated(ctx context.Context, ep Endpoint, key harness.Key, g GatedKey) (GatedResult, error)
}

// GatedKey is one gated key: the gate, and what to read with the key.
type GatedKey struct {
	Gate         func(Observation) error
	ReadAfter    bool // the agent state right after the key
	ScreenBefore bool // the screen right before the key
}

// GatedResult is what a gated key did. Refused is the gate's own error,
// unchanged, when it refused (then nothing was sent); the error returned
// beside it is a failed delivery.
type GatedResult struct {
	Refused error
	After   *Observation
	Before  *Screen
}
