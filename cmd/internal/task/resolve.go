// Package task turns an exact task id into everything a verb needs: the
// record, its kind and harness, and the backend adapter for its endpoint. It
// never searches for a window or guesses a harness.
package task

import (
	"strings"

	"fmctl/backends"
	"fmctl/backends/mux"
	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// Target is a resolved task.
type Target struct {
	Home            config.Home
	Store           state.Store
	Task            *state.Task
	ID              string
	Kind            harness.Kind
	RecordedHarness string
	Harness         harness.Harness // the verified family, when HasHarness
	HasHarness      bool
	BackendName     string
	Ability         harness.Backend
	Backend         backends.Backend
	Endpoint        backends.Endpoint
	// env and runner locate and read the agent's own record (AgentRecord).
	env    config.Env
	runner backends.Runner
}

// Load reads and validates task id's record, in the control plane's refusal
// order: record present, not remote, endpoint identity, kind, backend.
// The caller has already checked the id's shape (and taken any lock).
func (o Opener) Load(home config.Home, id string) (*Target, error) {
	store := state.Store{Dir: home.State}
	task, err := loadTask(store, o.Tool, id)
	if err != nil {
		return nil, err
	}
	return o.open(home, task)
}

// LoadRead is Load for a record whose bytes the caller already read
// (list: each record once, for the caller's scan and the load).
func (o Opener) LoadRead(home config.Home, id string, data []byte) (*Target, error) {
	task, err := state.Store{Dir: home.State}.TaskFrom(id, data)
	if err != nil {
		return nil, err
	}
	return o.open(home, task)
}

// open validates a loaded record and opens its backend: Load's refusals
// after the read.
func (o Opener) open(home config.Home, task *state.Task) (*Target, error) {
	tool, id, store := o.Tool, task.ID, state.Store{Dir: home.State}
	rec := task.Record
	if host := rec.RemoteHost(); host != "" {
		return nil, fault.Failed("task %s is a remotely placed secondmate on %s; its agent runs outside this home, so nothing %s does here could reach or verify it", id, phrase.Printable(host), tool).Coded(fault.ERemoteTask).
			Hint("drive its lifecycle on that host, and reconcile it through the secondmate recovery path rather than this plane")
	}
	if err := task.ValidateIdentity(); err != nil {
		return nil, err
	}
	kind, ok := harness.ParseKind(rec.Kind())
	if !ok {
		return nil, fault.Failed("task %s records kind '%s', which is not %s", id, phrase.Printable(rec.Kind()), phrase.OrList(harness.KindNames())).Coded(fault.EBadRecord)
	}
	name := rec.Backend()
	ability, known := harness.LookupBackend(name)
	if !known {
		return nil, fault.Failed("task %s records backend '%s', which fmctl does not know (known: %s)", id, phrase.Printable(name), strings.Join(harness.BackendNames(), ", ")).Coded(fault.ENoAdapter)
	}
	t := &Target{
		Home: home, Store: store, Task: task, ID: id, Kind: kind,
		RecordedHarness: rec.Harness(), BackendName: name, Ability: ability,
		env: o.Env, runner: o.Runner,
	}
	t.Harness, t.HasHarness = harness.Family(t.RecordedHarness)
	if !ability.Adapter {
		return t, fault.Failed("task %s runs on the %s backend, for which fmctl ships no adapter; drive it with that backend's own tools", id, name).Coded(fault.ENoAdapter)
	}
	be, err := mux.Open(name, o.Runner, backends.Env(o.Env), o.Tunables.Mux)
	if err != nil {
		return nil, fault.Failed("%w", err)
	}
	t.Backend = be
	t.Endpoint = backends.RecordEndpoint(id, rec)
	if err := be.ValidateRecord(t.Endpoint); err != nil {
		return nil, fault.Failed("task %s's record does not name a valid %s endpoint: %v; preserving task state", id, name, err).Coded(fault.EBadRecord)
	}
	return t, nil
}

// RequireHarness refuses a task whose recorded harness has no verified
// mechanics: an interrupt key or exit command is never guessed.
func (t *Target) RequireHarness(tool string) error {
	if t.HasHarness {
		return nil
	}
	rec := t.RecordedHarness
	if rec == "" {
		rec = "none"
	}
	return fault.Failed("task %s records harness '%s', which has no verified control mechanics; %s refuses to guess an interrupt key or exit command", t.ID, phrase.Printable(rec), tool).Coded(fault.EUnverifiedHarness).
		Hint("verified harnesses: %s", strings.Join(harness.Names(), ", "))
}

// Family is the resolved harness name for output, or the recorded value.
func (t *Target) Family() string {
	if t.HasHarness {
		return t.Harness.Name
	}
	return t.RecordedHarness
}

// RelaunchCommand is fm-control relaunch for task id of kind k as a hint
// offers it, complete: with the progress note a ship's or scout's relaunch
// requires, as the placeholder <note>.
func RelaunchCommand(id string, k harness.Kind) string {
	if k.RelaunchNeedsNote() {
		return "fm-control relaunch " + id + " --note <note>"
	}
	return "fm-control relaunch " + id
}

// Relaunches is how a hint offers a new agent for a task whose endpoint
// holds none: fm-spawn --relaunch, or fm-control relaunch, which journals
// the replacement and records where the work stands.
func Relaunches(id string, k harness.Kind) string {
	return "fm-spawn " + id + " --relaunch (or " + RelaunchCommand(id, k) + ")"
}

// DriftFix is the hint that corrects a record whose endpoint drifted:
// rebind where the adapter can find the task's pane, by hand elsewhere.
func (t *Target) DriftFix() string {
	if _, ok := t.Backend.(backends.PaneFinder); ok {
		return "re-point the record with fm-control rebind " + t.ID + ", then try again"
	}
	return "correct the record by hand (the backend cannot find the task's pane), then try again"
}
