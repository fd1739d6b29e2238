package launch

import (
	"context"
	"strings"
	"testing"

	"fmctl/backends"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/state"
)

// aliveBackend reads an agent at every endpoint and counts anything typed.
type aliveBackend struct {
	backends.Backend
	typed int
}

func (b *aliveBackend) Name() string { return "tmux" }
func (b *aliveBackend) AgentState(context.Context, backends.Endpoint) backends.Observation {
	return backends.Observation{State: backends.StateAlive, Detail: "claude"}
}
func (b *aliveBackend) SendText(context.Context, backends.Endpoint, string) error {
	b.typed++
	return nil
}
func (b *aliveBackend) SendKey(context.Context, backends.Endpoint, harness.Key) error {
	b.typed++
	return nil
}

// A relaunch refused because the endpoint still runs an agent names the tool
// the user ran (fm-control relaunch goes through the same launch as
// fm-spawn --relaunch) and types nothing.
func TestRelaunchRefusalNamesTheCallingTool(t *testing.T) {
	h, ok := harness.Lookup("claude")
	if !ok {
		t.Fatal("the table has no claude row")
	}
	for tool, other := range map[string]string{"fm-control": "fm-spawn", "fm-spawn": "fm-control relaunch"} {
		be := &aliveBackend{}
		target := &task.Target{
			ID: "t1", Kind: harness.KindShip, Task: &state.Task{ID: "t1"}, Store: state.Store{Dir: t.TempDir()},
			BackendName: "tmux", Backend: be, Endpoint: backends.Endpoint{Backend: "tmux", Target: "s:fm-t1", TaskID: "t1", Worktree: t.TempDir()},
		}
		l := Launcher{Tool: tool, Env: func(string) string { return "" }, Tunables: config.DefaultTunables(), InputHeld: true}
		_, err := l.Relaunch(context.Background(), target, Replacement{Harness: h})
		if err == nil {
			t.Fatalf("%s: a relaunch into an endpoint that runs an agent was not refused", tool)
		}
		if fault.CodeOf(err) != fault.EAgentRunning {
			t.Errorf("%s: refused with code %s, want %s", tool, fault.CodeOf(err), fault.EAgentRunning)
		}
		if msg := err.Error(); !strings.Contains(msg, tool) || strings.Contains(msg, other) {
			t.Errorf("%s: the refusal does not name the calling tool alone: %s", tool, msg)
		}
		if be.typed != 0 {
			t.Errorf("%s: %d keys or texts were typed into a live agent's endpoint", tool, be.typed)
		}
	}
}
