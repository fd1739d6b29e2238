package control

import (
	"time"

	"fmctl/backends"
	"fmctl/config"
)

// Waits are the control plane's tunable deadlines. They are upper bounds:
// every wait polls and returns as soon as its condition holds.
// What each bounds is its variable's row in config's table.
type Waits struct {
	Poll        time.Duration // FM_CONTROL_POLL
	Settle      time.Duration // FM_CONTROL_SETTLE_WAIT
	Exit        time.Duration // FM_CONTROL_EXIT_WAIT
	Launch      time.Duration // FM_CONTROL_LAUNCH_WAIT
	ExitRetries int           // FM_CONTROL_EXIT_RETRIES
}

func readWaits(v config.ControlVars) Waits {
	return Waits{Poll: v.Poll, Settle: v.SettleWait, Exit: v.ExitWait, Launch: v.LaunchWait, ExitRetries: v.ExitRetries}
}

// backoff is one wait's poll interval: a fast agent is seen within about
// 10 ms, and a slow one is read at most every Poll.
func (w Waits) backoff() *backends.Backoff {
	return &backends.Backoff{Max: w.Poll}
}
