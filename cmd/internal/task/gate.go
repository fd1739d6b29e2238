package task

import (
	"context"
	"strings"

	"fmctl/backends"
	"fmctl/cmd/internal/fault"
	"fmctl/phrase"
)

// RequireAgent is the gate every keystroke passes: it reads the endpoint and
// refuses unless the task's own agent runs there, positively classified alive
// and attributed to the recorded harness. Anything else (a bare shell, a
// stopped agent, another harness, a vanished or unreadable endpoint) would
// receive the keys as shell input or as a message to the wrong worker. The
// caller holds the task's input lock, so nothing can change the agent
// between this read and the keys it types.
func (t *Target) RequireAgent(ctx context.Context, tool string) (backends.Observation, error) {
	obs := t.Backend.AgentState(ctx, t.Endpoint)
	return obs, t.Gate(obs, tool)
}

// Gate judges one observation the way RequireAgent does, for a verb that
// has already read the endpoint.
func (t *Target) Gate(obs backends.Observation, tool string) error {
	if !t.HasHarness {
		return t.RequireHarness(tool)
	}
	switch obs.State {
	case backends.StateAlive:
		if t.ownsAll(obs.Names) {
			return nil
		}
		return t.refuseGate(fault.EForeignAgent, "runs %s, which is not the task's recorded harness %s; nothing was sent", names(obs), t.Harness.Name).
			Hint("fmctl types only into the task's own agent: look at the pane, and stop that process there (or correct the record) first")
	case backends.StateUnverified:
		// A backend without a recovery-grade classifier (zellij) must still
		// name the harness process; without that evidence the keys go blind.
		if len(obs.Names) > 0 && t.ownsAll(obs.Names) {
			return nil
		}
		return t.refuseGate(fault.EAgentUnverified, "shows no %s process; the %s backend cannot otherwise prove the agent is there, so nothing was sent", t.Harness.Name, t.BackendName).
			With("detail", obs.Detail).Hint("%s", obs.Detail).
			Hint("look at the pane: if the agent is gone, start it again there yourself (fmctl cannot relaunch into a pane it cannot classify)")
	case backends.StateDead:
		return t.refuseGate(fault.EAgentNotRunning, "has no agent, only a shell (%s); nothing was sent", obs.Detail).
			Hint("start a new agent with %s", Relaunches(t.ID, t.Kind))
	case backends.StateSuspended:
		return t.refuseGate(fault.EAgentSuspended, "holds a stopped agent (%s); nothing was sent", obs.Detail).
			Hint("resume it with fg in its pane, then send again")
	case backends.StateDrifted:
		return t.refuseGate(fault.EEndpointDrifted, "has drifted (%s); nothing was sent", obs.Detail).Hint("%s", t.DriftFix())
	case backends.StateMissing:
		return t.refuseGate(fault.EEndpointMissing, "is gone (%s); nothing was sent", obs.Detail).
			Hint("relaunch the task with fm-spawn %s --relaunch", t.ID)
	case backends.StateUnreadable:
		return t.refuseGate(fault.EEndpointUnreadable, "could not be read: the multiplexer did not answer; nothing was sent").
			With("detail", obs.Detail).Hint("%s", obs.Detail).
			Hint("check the %s server, then send again", t.BackendName)
	}
	return t.refuseGate(fault.EForeignAgent, "runs something that is neither %s nor a shell (%s); nothing was sent", t.Harness.Name, obs.Detail).
		Hint("look at the pane: fmctl types only into the task's own agent")
}

func (t *Target) refuseGate(code fault.Code, format string, args ...any) *fault.Error {
	return fault.Failed("task %s's endpoint %s "+format, append([]any{t.ID, phrase.Printable(t.Endpoint.Target)}, args...)...).Coded(code).
		With("id", t.ID, "backend", t.BackendName, "endpoint", t.Endpoint.Target)
}

// Attributed reports whether obs shows the task's own agent: alive, or on
// a backend without a classifier, named, and every name decided by a
// process of the task's harness.
func (t *Target) Attributed(obs backends.Observation) bool {
	switch obs.State {
	case backends.StateAlive, backends.StateUnverified:
		return t.ownsAll(obs.Names)
	}
	return false
}

// ownsAll reports whether every agent name that decided an observation
// belongs to the task's harness family.
func (t *Target) ownsAll(agents []string) bool {
	if len(agents) == 0 {
		return false
	}
	for _, n := range agents {
		if !t.Harness.OwnsProcess(n) {
			return false
		}
	}
	return true
}

func names(obs backends.Observation) string {
	if len(obs.Names) == 0 {
		return "an unnamed process"
	}
	return strings.Join(obs.Names, ",")
}
