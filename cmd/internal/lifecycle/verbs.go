// Package lifecycle holds the bodies of the lifecycle actions more than one
// binary runs on a resolved task: interrupting its agent and stopping it
// through exit's postcondition (fm-control's interrupt, exit and relaunch;
// fm-teardown's stop).
package lifecycle

import (
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/state"
)

// Progress shows the person watching a live wait until the returned func
// is called (cli.Printer is the binaries' one).
type Progress interface {
	Waiting(what string, deadline time.Time) func()
}

// Verbs runs the shared lifecycle actions for one invocation.
type Verbs struct {
	waits    Waits
	print    Progress
	lockWait time.Duration // FM_SEND_LOCK_WAIT
	// openRecord opens the agent's own record; a test puts a fake here.
	openRecord func(t *task.Target, obs backends.Observation) (turnRecord, bool)
}

// New builds the actions from the process's tunables and printer.
func New(tun config.Tunables, p Progress) *Verbs {
	return &Verbs{waits: ReadWaits(tun.Control), print: p, lockWait: tun.Send.LockWait, openRecord: openAgentRecord}
}

// LockDelivery takes the task's input lock (see state.LockInput) while keys
// or text are sent, so a concurrent fm-send cannot interleave with them.
func (c *Verbs) LockDelivery(t *task.Target) (*state.Lock, error) {
	return t.Store.LockInput(t.ID, c.lockWait)
}

// Waits are the control plane's tunable deadlines. They are upper bounds:
// every wait polls and returns as soon as its condition holds.
// What each bounds is its variable's row in config's table.
type Waits struct {
	Poll        time.Duration // FM_CONTROL_POLL
	Settle      time.Duration // FM_CONTROL_SETTLE_WAIT
	Exit        time.Duration // FM_CONTROL_EXIT_WAIT
	Launch      time.Duration // FM_CONTROL_LAUNCH_WAIT
	Cancel      time.Duration // FM_CONTROL_CANCEL_WAIT
	ReportLag   time.Duration // FM_CONTROL_REPORT_LAG
	Ready       time.Duration // FM_CONTROL_READY_WAIT
	ExitRetries int           // FM_CONTROL_EXIT_RETRIES
}

// ReadWaits takes the waits from the tunables.
func ReadWaits(v config.ControlVars) Waits {
	return Waits{Poll: v.Poll, Settle: v.SettleWait, Exit: v.ExitWait, Launch: v.LaunchWait, Cancel: v.CancelWait, ReportLag: v.ReportLag, Ready: v.ReadyWait, ExitRetries: v.ExitRetries}
}

// Backoff is one wait's poll interval: a fast agent is seen within about
// 10 ms, and a slow one is read at most every Poll.
func (w Waits) Backoff() *backends.Backoff {
	return &backends.Backoff{Max: w.Poll}
}
