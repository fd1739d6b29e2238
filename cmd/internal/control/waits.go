package control

import (
	"time"

	"fmctl/backends"
	"fmctl/config"
)

// Waits are the control plane's tunable deadlines. They are upper bounds:
// every wait polls and returns as soon as its condition holds.
type Waits struct {
	Poll        time.Duration // FM_CONTROL_POLL: the cap of the classifier poll interval, which starts at 10 ms and doubles
	Settle      time.Duration // FM_CONTROL_SETTLE_WAIT: how long to watch for an adapter's cancel acknowledgement
	Exit        time.Duration // FM_CONTROL_EXIT_WAIT: how long an exit command gets to stop the agent
	Launch      time.Duration // FM_CONTROL_LAUNCH_WAIT: how long a relaunched agent gets to come up
	ExitRetries int           // FM_CONTROL_EXIT_RETRIES: Enter retries for the exit command
}

func readWaits(env config.Env) Waits {
	return Waits{
		Poll:        config.Duration(env, "FM_CONTROL_POLL", 100*time.Millisecond),
		Settle:      config.Duration(env, "FM_CONTROL_SETTLE_WAIT", 5*time.Second),
		Exit:        config.Duration(env, "FM_CONTROL_EXIT_WAIT", 30*time.Second),
		Launch:      config.Duration(env, "FM_CONTROL_LAUNCH_WAIT", 90*time.Second),
		ExitRetries: config.Int(env, "FM_CONTROL_EXIT_RETRIES", 3),
	}
}

// backoff is one wait's poll interval: a fast agent is seen within about
// 10 ms, and a slow one is read at most every Poll.
func (w Waits) backoff() *backends.Backoff {
	return &backends.Backoff{Max: w.Poll}
}
