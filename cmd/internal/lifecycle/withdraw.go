package lifecycle

import (
	"context"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/press"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
)

// withdrawWait bounds the wait for a withdrawn exit command's queue row to
// go: the agent redraws on the key, well within it.
const withdrawWait = 2 * time.Second

// withdrawQueuedExit takes back an exit command the agent queued instead of
// running (copilot, still finishing a cancelled turn after its screen and
// record show it over): left queued, it would end the agent whenever that
// turn is done, after fmctl said the agent stayed. One press of the
// harness's interrupt key drops the queue of a turn still running; it
// reports whether the queue row of the exit command is gone. Behind no turn
// the key drops nothing (copilot arms an exit instead), which is why
// waitExited submits such a command once more before this is reached.
func withdrawQueuedExit(ctx context.Context, t *task.Target, poll *backends.Backoff) (queued, withdrawn bool) {
	shows := func() bool {
		_, q := exitQueued(ctx, t)
		return q
	}
	if !shows() {
		return false, false
	}
	k := press.Keys{Backend: t.Backend, Endpoint: t.Endpoint, Gap: t.Harness.PressGap}
	if p, _ := k.Sequence(ctx, []harness.Key{t.Harness.InterruptKey}, press.Opts{}); p.Err != nil {
		return true, false
	}
	deadline := time.Now().Add(withdrawWait)
	for shows() {
		if time.Now().After(deadline) || poll.Sleep(ctx) != nil {
			return true, false
		}
	}
	return true, true
}

// exitQueued reads the screen once: whether the harness lists its exit
// command in its queue, and what else the screen holds. A harness without a
// queue on screen never shows one.
func exitQueued(ctx context.Context, t *task.Target) (harness.ScreenState, bool) {
	sig, ok := t.Harness.Screen()
	if !ok || !sig.HasQueue() {
		return harness.ScreenState{}, false
	}
	s, err := t.Backend.Capture(ctx, t.Endpoint)
	if err != nil {
		return harness.ScreenState{}, false
	}
	return sig.ReadScreen(s.Lines), sig.Queued(s.Lines, t.Harness.ExitCommand)
}
