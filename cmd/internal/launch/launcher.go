// Package launch starts an agent: it builds a harness's launch line from the
// capability table, types it into an agent-free endpoint's shell, and waits,
// bounded, for the agent to come up ready. fm-spawn (a fresh task and
// --relaunch) and fm-control relaunch all launch through it, so a
// replacement is started exactly as a first agent is.
package launch

import (
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/state"
)

// Launcher launches agents for one invocation of Tool.
type Launcher struct {
	Tool     string // the binary the user ran, named in refusals
	Env      config.Env
	Tunables config.Tunables
	Runner   backends.Runner
	Print    Progress
	// LaunchWait bounds the wait for the new agent to come up; zero reads
	// FM_SPAWN_WAIT.
	LaunchWait time.Duration
	// InputHeld: the caller already holds the task's input lock (fm-control
	// relaunch takes it before stopping the old agent). The lock is an
	// flock, which one process must not take twice, so ownership is passed
	// explicitly rather than taken again here.
	InputHeld bool
}

// Progress is where a launch tells the person watching what it is doing:
// a notice line, and a live wait (cli.Printer is the binaries' one).
type Progress interface {
	Notice(format string, args ...any)
	// Waiting shows what a wait is for until the returned func is called.
	Waiting(what string, deadline time.Time) func()
}

// Result is what a launch achieved: the facts of its outcome line
// (`spawned <id> ...`, which the binary prints), and where it got to.
type Result struct {
	Facts  []fault.Fact
	Ready  string // confirmed, starting, or blocked (Dialog names the dialog)
	Dialog string
	Record state.Record
}

// LockInput takes the task's input lock for a launch line, unless the
// caller passed it in; release is always safe to call.
func (l Launcher) LockInput(store state.Store, id string) (release func(), err error) {
	if l.InputHeld {
		return func() {}, nil
	}
	lock, err := store.LockInput(id, l.Tunables.Send.LockWait)
	if err != nil {
		return nil, err
	}
	return lock.Release, nil
}

func (l Launcher) launchWait() time.Duration {
	if l.LaunchWait > 0 {
		return l.LaunchWait
	}
	return l.Tunables.Spawn.Wait
}

func (l Launcher) poll() time.Duration {
	return l.Tunables.Control.Poll
}

// pathWait bounds how long the endpoint's shell gets to report its directory.
func (l Launcher) pathWait() time.Duration {
	return l.Tunables.Spawn.PathWait
}

// Spawned is the facts of a launched agent's outcome line, fresh or
// relaunched, on backend be at ep. How to attach to it, where the adapter
// can say, is a JSON fact (the text line's tokens are a fixed contract;
// fm-spawn prints it as a notice there).
func Spawned(harnessName, kind, backend string, be backends.Backend, ep backends.Endpoint, worktree string, ready Readiness) []fault.Fact {
	out := []fault.Fact{fault.Str("harness", harnessName), fault.Str("kind", kind), fault.Str("backend", backend),
		fault.Str("window", ep.Target), fault.Str("worktree", worktree), fault.Str("ready", ready.Ready)}
	if ready.Dialog != "" {
		out = append(out, fault.Str("dialog", ready.Dialog))
	}
	if a, ok := be.(backends.Attacher); ok {
		if line, ok := a.AttachCommand(ep); ok {
			attach := fault.Str("attach", line)
			attach.JSONOnly = true
			out = append(out, attach)
		}
	}
	return out
}
