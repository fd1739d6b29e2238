package state

import (
	"strconv"
	"strings"
	"time"

	"fmctl/harness"
)

// The meta record's keys (the spec's meta record table). state owns their
// spelling: every other package reads a record through the accessors below
// and writes one through these names, never a literal (tests/literals).
const (
	KeyWindow            = "window"
	KeyEndpointTaskID    = "endpoint_task_id"
	KeyBackend           = "backend"
	KeyHarness           = "harness"
	KeyKind              = "kind"
	KeyWorktree          = "worktree"
	KeyProject           = "project"
	KeyModel             = "model"
	KeyEffort            = "effort"
	KeySpawnGen          = "spawn_gen"
	KeyBusyGen           = "busy_gen"
	KeyRemoteHost        = "remote_host"
	KeyControlRelaunchTx = "control_relaunch_tx"
	// KeySharedWorktree=yes: the task joined its worktree with
	// --shared-worktree, so the task already there relaunches beside it.
	KeySharedWorktree = "shared_worktree"
	// The tmux adapter's stable pane and window ids, kept beside window=:
	// a window name is a label anyone can change, while tmux never reuses
	// a pane id (%N) or window id (@N) within a server, so they tell
	// "renamed" apart from "gone" (backends/tmux/ident.go).
	KeyTmuxPane   = "tmux_pane_id"
	KeyTmuxWindow = "tmux_window_id"
	// KeyTmuxPanePID is the pane's first process (its shell), which lives
	// as long as the pane: a key can be gated on the agent under it before
	// any tmux call, and tmux checks the pid when it takes the key.
	KeyTmuxPanePID = "tmux_pane_pid"
	// KeyTmuxServer is the tmux server that issued those ids, as its
	// pid:start_time: a restarted server (or a rebooted machine) issues %0
	// again, so a recorded id names the task's pane only on this server.
	KeyTmuxServer = "tmux_server"
	// KeyPanePID is the pane's first process (its shell) on a backend other
	// than tmux, where the backend reports one (backends/ says which): the
	// process every caller inside the pane descends from (authority).
	KeyPanePID = "pane_pid"
	// KeyGrants widens what the task's own agent may run on other tasks
	// (authority.ParseGrants reads it); only the operator writes it.
	KeyGrants = "grants"
	// KeySpawnedBy names the task whose pane ran the fm-spawn that created
	// this one: a grant "@children" reaches the tasks that name it.
	KeySpawnedBy = "spawned_by"
	// KeyPermissions is the permission mode the task's agents launch in
	// (harness.PermissionMode): "ask" keeps the harness's permission
	// dialogs; absent is auto, as every record before it ran.
	KeyPermissions = "permissions"
)

// MetaKeys lists every meta record key state names.
func MetaKeys() []string {
	return []string{
		KeyWindow, KeyEndpointTaskID, KeyBackend, KeyHarness, KeyKind, KeyWorktree, KeyProject,
		KeyModel, KeyEffort, KeySpawnGen, KeyBusyGen, KeyRemoteHost, KeyControlRelaunchTx, KeySharedWorktree,
		KeyTmuxPane, KeyTmuxPanePID, KeyTmuxWindow, KeyTmuxServer, KeyPanePID, KeyGrants, KeySpawnedBy, KeyPermissions,
	}
}

// DefaultBackend is the backend of a record with no backend= line (records
// from before any other backend existed) and of a spawn that names none;
// a fresh record on it omits the line, as the original toolkit's did.
const DefaultBackend = harness.BackendTmux

// Window is the recorded endpoint.
func (r Record) Window() string { return r.Get(KeyWindow) }

// Worktree is the git worktree the agent works in.
func (r Record) Worktree() string { return r.Get(KeyWorktree) }

// Harness is the recorded harness value: an adapter name, or the basename of
// a raw launch command (harness.Family resolves it).
func (r Record) Harness() string { return r.Get(KeyHarness) }

// Kind is the recorded kind value, raw; harness.ParseKind reads it ("" is a ship).
func (r Record) Kind() string { return r.Get(KeyKind) }

// Backend is the recorded backend, DefaultBackend when the record names none.
func (r Record) Backend() string {
	if b := r.Get(KeyBackend); b != "" {
		return b
	}
	return DefaultBackend
}

// Model and Effort are the recorded launch profile ("default" or "" = the
// harness's own default).
func (r Record) Model() string  { return r.Get(KeyModel) }
func (r Record) Effort() string { return r.Get(KeyEffort) }

// SpawnGen is the incarnation the record describes.
func (r Record) SpawnGen() string { return r.Get(KeySpawnGen) }

// SpawnedAt is when the incarnation was launched, to the second, read out
// of its spawn_gen (s<unix seconds>.<pid>, launch.newSpawnGen); any other
// shape has none.
func (r Record) SpawnedAt() (time.Time, bool) {
	gen := r.SpawnGen()
	secs, _, ok := strings.Cut(strings.TrimPrefix(gen, "s"), ".")
	if !ok || !strings.HasPrefix(gen, "s") {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}

// RemoteHost is set for a remotely placed secondmate.
func (r Record) RemoteHost() string { return r.Get(KeyRemoteHost) }

// SharedWorktree says the task joined its worktree on purpose.
func (r Record) SharedWorktree() bool { return r.Get(KeySharedWorktree) == Yes }

// Yes is a record's word for a true flag.
const Yes = "yes"

// Grants is the recorded grants line, raw ("" grants nothing).
func (r Record) Grants() string { return r.Get(KeyGrants) }

// Permissions is the recorded permission mode, raw ("" is auto;
// harness.ParsePermissionMode reads it).
func (r Record) Permissions() string { return r.Get(KeyPermissions) }

// SpawnedBy is the task that spawned this one, if a task did.
func (r Record) SpawnedBy() string { return r.Get(KeySpawnedBy) }

// TmuxPanePID is the recorded pid of the task's tmux pane's first process.
func (r Record) TmuxPanePID() string { return r.Get(KeyTmuxPanePID) }

// PanePIDOf is the recorded pid of a task's pane's first process, on any
// backend, read from a record's unparsed bytes (authority peeks at every
// record): pane_pid, else a tmux record's tmux_pane_pid; "" when neither.
func PanePIDOf(data []byte) string {
	if v := LastValue(data, KeyPanePID); v != "" {
		return v
	}
	return LastValue(data, KeyTmuxPanePID)
}

// ControlRelaunchTx is the relaunch transaction that wrote the record, if any.
func (r Record) ControlRelaunchTx() string { return r.Get(KeyControlRelaunchTx) }
