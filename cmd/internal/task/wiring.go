package task

import "fmctl/harness/wiring"

// RetireWiring removes the telemetry wiring the task's current incarnation
// was launched with (a merged settings file loses only fmctl's entries),
// once its agent is gone or about to be replaced.
func (t *Target) RetireWiring() error {
	if !t.HasHarness {
		return nil
	}
	return wiring.Retire(t.Harness, t.wiringTask())
}

// CheckRetireWiring refuses as RetireWiring would, changing nothing: a
// relaunch calls it before it stops the agent.
func (t *Target) CheckRetireWiring() error {
	if !t.HasHarness {
		return nil
	}
	return wiring.CheckRetire(t.Harness, t.wiringTask())
}

func (t *Target) wiringTask() wiring.Task {
	return wiring.Task{Worktree: t.Endpoint.Worktree, StateDir: t.Store.Dir, ID: t.ID}
}
