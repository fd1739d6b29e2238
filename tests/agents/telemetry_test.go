package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/harness"
	"fmctl/state"
	"fmctl/tests/agents/stubmodel"
)

// TestTelemetry proves each harness's native wiring on the real CLI: the
// agent-state file fm-control agent-event writes goes ready/idle after the
// launch prompt, busy on a held prompt, idle after fm-control interrupt and
// ended after fm-control exit, always under the current spawn_gen.
func TestTelemetry(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			requireAgents(t, p)
			h, ok := harness.Lookup(p.name)
			if !ok {
				t.Skipf("%s has no capability-table row on this branch", p.name)
			}
			tel, ok := h.Telemetry()
			if !ok {
				t.Skipf("%s has no telemetry mechanism", p.name)
			}
			telemetryLifecycle(t, p, tel)
		})
	}
}

// agentState reads the lab task's agent-state under the record's current
// generation.
func (l *lab) agentState() (state.AgentState, string, bool) {
	store := state.Store{Dir: filepath.Join(l.fmHome, "state")}
	data, err := os.ReadFile(store.MetaPath(l.id))
	if err != nil {
		return state.AgentState{}, "", false
	}
	rec, err := state.ParseRecord(data)
	if err != nil {
		return state.AgentState{}, "", false
	}
	gen := rec.Get("spawn_gen")
	a, ok := store.ReadAgentState(l.id, gen)
	return a, gen, ok
}

// waitAgentState polls until the current generation's state is one of want.
func (l *lab) waitAgentState(d time.Duration, want ...string) (state.AgentState, bool) {
	var last state.AgentState
	ok := poll(d, func() bool {
		a, _, ok := l.agentState()
		if !ok {
			return false
		}
		last = a
		for _, w := range want {
			if a.State == w {
				return true
			}
		}
		return false
	})
	return last, ok
}

func telemetryLifecycle(t *testing.T, p profile, tel harness.Telemetry) {
	l := newLab(t, p, "telemetry")
	r := l.spawn()
	if r.code != 0 {
		t.Fatalf("fm-spawn: %s", r)
	}
	a, ok := l.waitAgentState(60*time.Second, state.ActivityReady, state.ActivityIdle)
	_, gen, _ := l.agentState()
	if !ok {
		t.Errorf("%s: no ready/idle agent-state under gen %s after spawn (last %+v)", p.name, gen, a)
	} else {
		t.Logf("%s after spawn: state=%s event=%s gen=%s", p.name, a.State, a.Event, a.Gen)
	}
	if a.Gen != "" && a.Gen != gen {
		t.Errorf("agent-state gen %s is not the record's spawn_gen %s", a.Gen, gen)
	}
	l.settle(30 * time.Second)

	r = l.fm("fm-send", l.id, "please wait "+stubmodel.HangWord+" "+randHex(3))
	if r.code != 0 {
		t.Fatalf("fm-send of the held prompt: %s", r)
	}
	if !poll(30*time.Second, func() bool { return l.stub.Held() > 0 }) {
		t.Fatalf("the stub never held the %s request", stubmodel.HangWord)
	}
	if tel.ReportsPrompt {
		if a, ok := l.waitAgentState(10*time.Second, state.ActivityBusy); !ok {
			t.Errorf("%s: held prompt, but agent-state is %+v, not busy", p.name, a)
		} else {
			t.Logf("%s while held: state=busy event=%s", p.name, a.Event)
		}
	}
	l.capture("telemetry-busy")

	r = l.fm("fm-control", "interrupt", l.id)
	if r.code != 0 {
		t.Errorf("interrupt: %s", r)
	}
	a, ok = l.waitAgentState(15*time.Second, state.ActivityIdle)
	cancel := field(r.stdout, "cancel")
	switch {
	case ok:
		t.Logf("%s after interrupt: state=idle event=%s cancel=%s", p.name, a.Event, cancel)
	default:
		t.Logf("%s after interrupt: no turn-finished event (state %s); cancel=%s", p.name, a.State, cancel)
		if cancel == "confirmed" {
			t.Errorf("%s: interrupt said cancel=confirmed without a turn-finished event", p.name)
		}
	}
	if !poll(15*time.Second, func() bool { return l.stub.Held() == 0 }) {
		t.Errorf("%s: the stub still holds the request 15s after the interrupt", p.name)
	}
	l.rawKeys("C-u")

	r = l.fm("fm-control", "exit", l.id)
	if r.code != 0 && !strings.Contains(r.stdout+r.stderr, "exit=unconfirmed") {
		t.Errorf("exit: %s", r)
	}
	if a, ok := l.waitAgentState(10*time.Second, state.ActivityEnded); !ok {
		t.Logf("%s after exit: no session-end event (state %s event %s)", p.name, a.State, a.Event)
	} else {
		t.Logf("%s after exit: state=ended event=%s", p.name, a.Event)
	}
	if tel.File != "" && strings.HasPrefix(tel.File, "wt/") {
		if data, err := os.ReadFile(filepath.Join(l.wt, strings.TrimPrefix(tel.File, "wt/"))); err == nil && strings.Contains(string(data), "fm-control") {
			t.Errorf("%s: exit left fmctl's wiring in %s", p.name, tel.File)
		}
	}
}

// TestTelemetryExitBusyCodex: /quit on a busy codex leaves the turn running
// in its app-server daemon, so exit must end the turn first or say
// exit=unconfirmed; it may never say stopped while the stub still holds the
// request.
func TestTelemetryExitBusyCodex(t *testing.T) {
	p := lookupProfile("codex")
	requireAgents(t, p)
	l := newLab(t, p, "telemetry-exit-busy")
	if r := l.spawn(); r.code != 0 {
		t.Fatalf("fm-spawn: %s", r)
	}
	l.settle(30 * time.Second)
	if r := l.fm("fm-send", l.id, "please wait "+stubmodel.HangWord+" "+randHex(3)); r.code != 0 {
		t.Fatalf("fm-send: %s", r)
	}
	if !poll(30*time.Second, func() bool { return l.stub.Held() > 0 }) {
		t.Fatalf("the stub never held the request")
	}
	r := l.fm("fm-control", "exit", l.id)
	released := poll(5*time.Second, func() bool { return l.stub.Held() == 0 })
	unconfirmed := strings.Contains(r.stdout+r.stderr, "exit=unconfirmed")
	switch {
	case r.code == 0 && !released:
		t.Errorf("exit said %q while the stub still holds the turn's request", strings.TrimSpace(r.stdout))
	case r.code == 0:
		t.Logf("exit stopped codex and its turn: %s", r)
	case unconfirmed:
		t.Logf("exit=unconfirmed (held=%d): %s", l.stub.Held(), r)
	default:
		t.Errorf("exit failed without exit=unconfirmed: %s", r)
	}
}
