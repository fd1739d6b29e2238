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

// silentOnInterrupt and silentOnExit are the harnesses whose real CLI was
// seen not to report that moment through any mechanism it offers; the
// verbs then fall back to the classifier (exit) or cancel=unconfirmed.
var silentOnInterrupt = map[string]string{
	"claude": "2.1.197 runs no Stop or StopFailure hook when the user interrupts a turn, and has no interrupt hook",
}

// keepsRequestOnInterrupt: the CLI cancels the turn on screen but leaves its
// model request open (the capture telemetry-after-interrupt shows the prompt
// back in the composer and no spinner while the stub still holds it).
var keepsRequestOnInterrupt = map[string]string{
	"claude": "2.1.197 puts the prompt back and stops its spinner, but does not close the held request",
}

var silentOnExit = map[string]string{
	"opencode": "1.18.33's /exit ends the process without the plugin seeing server.instance.disposed",
	"kilo":     "7.7.7, opencode's fork, ends on /exit as opencode does: the plugin never sees server.instance.disposed",
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

// reportedByBuiltins checks that the hooks so far reported through the
// events directory alone: fm-control agent-event, the way a hook reports
// when its shell cannot, writes the agent-state file, and nothing else has
// written it since the spawn cleared it.
func (l *lab) reportedByBuiltins(t *testing.T) {
	t.Helper()
	store := state.Store{Dir: filepath.Join(l.fmHome, "state")}
	if data, err := os.ReadFile(store.AgentStatePath(l.id)); err == nil {
		t.Errorf("%s runs its hooks under bash, yet fm-control reported for it: %q", l.p.name, data)
	}
	if entries, err := os.ReadDir(store.AgentEventsDir(l.id)); err != nil || len(entries) == 0 {
		t.Errorf("%s: its events directory holds nothing (%v)", l.p.name, err)
	}
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
	// The launch prompt reaches the stub (and gets its 400) first.
	l.waitLaunchTurn()
	a, ok := l.waitAgentState(10*time.Second, state.ActivityReady, state.ActivityIdle)
	if ok && a.State == state.ActivityReady {
		// claude reports its session's start before the launch turn, and
		// that turn's end (the stub's 400, StopFailure) after it: 2.1.332
		// was still in it when the record read no turn, and queued the
		// prompt below behind it, which then ran with no prompt report.
		if idle, ended := l.waitAgentState(10*time.Second, state.ActivityIdle); ended {
			a = idle
		}
	}
	_, gen, _ := l.agentState()
	switch {
	case ok:
		t.Logf("%s after spawn: state=%s event=%s gen=%s", p.name, a.State, a.Event, a.Gen)
	case a.Gen == gen && a.State == state.ActivityBusy:
		// An honest report, not a fmctl claim: this harness reports no
		// end for a turn that ended in a model error (the stub's 400).
		t.Logf("%s after spawn: the launch turn's error end was not reported (state=busy event=%s)", p.name, a.Event)
	default:
		t.Errorf("%s: no agent-state under the record's gen %s after spawn (last %+v)", p.name, gen, a)
	}
	l.settle(30 * time.Second)

	r = l.fm("fm-send", l.addr, "please wait "+stubmodel.HangWord+" "+randHex(3))
	switch {
	case r.code == 3 && !poll(3*time.Second, func() bool { return l.stub.Held() > 0 }):
		// What fm-send's exit 3 tells the caller to do when the composer
		// still holds the text (claude drops an Enter after a paste).
		l.fm("fm-send", l.addr, "--key", "Enter")
	case r.code != 0 && r.code != 3:
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
		if tel.HookShell() == "bash" {
			l.reportedByBuiltins(t)
		}
	}
	l.capture("telemetry-busy")

	r = l.fm("fm-control", "interrupt", l.addr)
	// Exit 3 is the honest word for keys delivered with nothing to prove
	// the cancel (cancel=unconfirmed); the switch below still asks the
	// agent's own report whether the turn ended.
	if r.code != 0 && r.code != 3 {
		t.Errorf("interrupt: %s", r)
	}
	a, ok = l.waitAgentState(15*time.Second, state.ActivityIdle)
	l.capture("telemetry-after-interrupt")
	cancel := field(r.stdout, "cancel")
	switch {
	case ok:
		t.Logf("%s after interrupt: state=idle event=%s cancel=%s", p.name, a.Event, cancel)
	case cancel == "confirmed" && field(r.stdout, "proof") == "record":
		// The agent's own record, not its telemetry, proved the cancel
		// (claude fires no hook on a user interrupt).
		t.Logf("%s after interrupt: no turn-finished event (state %s); cancel=confirmed proof=record", p.name, a.State)
	case cancel == "confirmed":
		t.Errorf("%s: interrupt said cancel=confirmed proof=%s without a turn-finished event", p.name, field(r.stdout, "proof"))
	case silentOnInterrupt[p.name] != "":
		t.Logf("%s after interrupt: no turn-finished event (state %s), as known: %s", p.name, a.State, silentOnInterrupt[p.name])
	default:
		t.Errorf("%s after interrupt: no turn-finished event (state %s); cancel=%s", p.name, a.State, cancel)
	}
	if !poll(15*time.Second, func() bool { return l.stub.Held() == 0 }) {
		if why := keepsRequestOnInterrupt[p.name]; why != "" {
			t.Logf("%s: the stub still holds the request 15s after the interrupt, as known: %s", p.name, why)
		} else {
			t.Errorf("%s: the stub still holds the request 15s after the interrupt", p.name)
		}
	}
	l.rawKeys("C-u")

	r = l.fm("fm-control", "exit", l.addr)
	if r.code != 0 && !strings.Contains(r.stdout+r.stderr, "exit=unconfirmed") {
		t.Errorf("exit: %s", r)
	}
	switch a, ok := l.waitAgentState(10*time.Second, state.ActivityEnded); {
	case ok:
		t.Logf("%s after exit: state=ended event=%s", p.name, a.Event)
	case silentOnExit[p.name] != "":
		t.Logf("%s after exit: no session-end event (state %s), as known: %s", p.name, a.State, silentOnExit[p.name])
	default:
		t.Errorf("%s after exit: no session-end event (state %s event %s)", p.name, a.State, a.Event)
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
	l.waitLaunchTurn()
	if r := l.fm("fm-send", l.addr, "please wait "+stubmodel.HangWord+" "+randHex(3)); r.code != 0 {
		t.Fatalf("fm-send: %s", r)
	}
	if !poll(30*time.Second, func() bool { return l.stub.Held() > 0 }) {
		t.Fatalf("the stub never held the request")
	}
	r := l.fm("fm-control", "exit", l.addr)
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

// waitLaunchTurn waits until the launch prompt's request has reached the
// stub and the agent's record shows no running turn: codex's daemon takes
// seconds to come up, and a prompt typed before then is merged into it.
func (l *lab) waitLaunchTurn() {
	l.t.Helper()
	if !poll(60*time.Second, func() bool { return len(l.stub.Requests()) > 0 }) {
		l.fatalf("the launch prompt never reached the model stub")
	}
	l.settle(30 * time.Second)
}
