package launch

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/harness/wiring"
	"fmctl/state"
)

// Incarnation is one agent about to be launched for a task: the generation
// it runs under, its launch line, and the telemetry wiring that goes with
// it. Nothing is written until Install.
type Incarnation struct {
	Gen  string
	Line string
	// Binary is the program Line runs, as typed: a shell that cannot find
	// it names it in its complaint.
	Binary string
	// pins is the config/fm.toml whose [harness.<name>] binary pins Binary.
	pins string
	wire wired
	// eventKey is this incarnation's secret for agent-event, minted here
	// and written by Install; "" for an unwired harness (no hooks call).
	eventKey string
}

// Agent is what an incarnation runs: which harness, for which task and
// kind, where, pointed at which brief, with which model and effort.
type Agent struct {
	Harness       harness.Harness
	ID            string
	Kind          harness.Kind
	Worktree      string
	Brief         string
	Model, Effort string
	// Permissions is the task's permission mode ("" = auto).
	Permissions harness.PermissionMode
}

// Prepare names a new incarnation and builds its launch line, with
// config/fm.toml's per-harness overrides. It writes nothing, so a bad
// config or model refuses before anything is changed.
func (l Launcher) Prepare(home config.Home, f config.File, a Agent) (Incarnation, error) {
	inc := Incarnation{Gen: newSpawnGen(), pins: home.FilePath()}
	inc.wire = l.prepareWiring(home, a.Harness, a.ID, a.Worktree, inc.Gen)
	p := harness.LaunchParams{Model: a.Model, Effort: a.Effort, Worktree: a.Worktree, Brief: a.Brief, TelemetryArgs: inc.wire.args, Permissions: a.Permissions}
	if inc.wire.target.FMControl != "" {
		key, err := state.NewEventKey()
		if err != nil {
			return Incarnation{}, fault.Failed("%w", err)
		}
		inc.eventKey = key
		p.EventKeyFile = state.Store{Dir: home.State}.EventKeyPath(a.ID)
	}
	if o, ok := f.Harness[a.Harness.Name]; ok {
		p.Binary, p.ExtraArgs = o.Binary, o.Args
	}
	// A secondmate's worktree is its own home.
	if a.Kind == harness.KindSecondmate {
		p.Home = a.Worktree
	}
	line, err := a.Harness.LaunchLine(p)
	if err != nil {
		return Incarnation{}, fault.Failed("%w", err)
	}
	inc.Line, inc.Binary = line, a.Harness.Executable(p)
	return inc, nil
}

// launchTurnReported reports whether this incarnation's agent has reported
// a turn through its own hooks: a prompt taken, or busy, in this spawn
// generation. While the launch holds the task's input lock that turn is
// the launch prompt's. An unwired harness reports nothing.
func (inc Incarnation) launchTurnReported() bool {
	if inc.eventKey == "" {
		return false
	}
	w := inc.wire.task
	a, ok := (state.Store{Dir: w.StateDir}).ReadAgentState(w.ID, inc.Gen)
	return ok && (!a.Turn.IsZero() || a.State == state.ActivityBusy)
}

// Install writes the incarnation's event key (rotating the previous
// incarnation's out) and its telemetry files.
func (inc Incarnation) Install(h harness.Harness) error {
	if inc.eventKey != "" {
		w := inc.wire.task
		if err := (state.Store{Dir: w.StateDir}).WriteEventKey(w.ID, inc.eventKey); err != nil {
			return fault.Failed("could not write %s's event key: %v", w.ID, err)
		}
	}
	return inc.wireUp(h, wiring.Install)
}

// CheckInstall refuses as Install would, writing nothing.
func (inc Incarnation) CheckInstall(h harness.Harness) error {
	return inc.wireUp(h, wiring.CheckInstall)
}

func (inc Incarnation) wireUp(h harness.Harness, install func(harness.Harness, wiring.Task, harness.WiringTarget) error) error {
	w := inc.wire
	if w.target.FMControl == "" {
		return nil
	}
	if err := install(h, w.task, w.target); err != nil {
		return fault.Failed("could not wire %s's telemetry: %v", h.Name, err)
	}
	return nil
}

// Retire removes what Install wrote, for a launch that is undone.
func (inc Incarnation) Retire(h harness.Harness) {
	_ = wiring.Retire(h, inc.wire.task)
}

// LoadConfig reads config/fm.toml, as a refusal when it is malformed.
func LoadConfig(home config.Home) (config.File, error) {
	f, err := home.LoadFile()
	if err != nil {
		return config.File{}, fault.Failed("%w", err)
	}
	return f, nil
}

// OrDefault is how a model or effort left unnamed is recorded.
func OrDefault(v string) string {
	if v == "" {
		return "default"
	}
	return v
}

// newSpawnGen names one incarnation of a task's agent.
func newSpawnGen() string {
	return "s" + strconv.FormatInt(time.Now().Unix(), 10) + "." + strconv.Itoa(os.Getpid())
}

// wired is one incarnation's telemetry: the entry-point call its wiring
// makes and the launch-line additions that carry it.
type wired struct {
	target harness.WiringTarget
	task   wiring.Task
	args   []string
}

// prepareWiring names what the incarnation's wiring will call; nothing is
// written yet. Without an fm-control to call, the agent runs unwired: its
// activity then reads unknown, which every reader already treats as "not
// proven idle".
func (l Launcher) prepareWiring(home config.Home, h harness.Harness, id, wt, gen string) wired {
	w := wired{task: wiring.Task{Worktree: wt, StateDir: home.State, ID: id}}
	if _, ok := h.Telemetry(); !ok {
		return w
	}
	fmc, err := wiring.FMControl()
	if err != nil {
		l.Print.Notice("telemetry=none for %s: %v", id, err)
		return w
	}
	w.target = harness.WiringTarget{FMControl: fmc, Home: home.Root, ID: id, Gen: gen, EventsDir: state.Store{Dir: home.State}.AgentEventsDir(id)}
	if home.State != filepath.Join(home.Root, "state") {
		w.target.StateDir = home.State
	}
	w.args = h.TelemetryArgs(w.target, home.State)
	return w
}
