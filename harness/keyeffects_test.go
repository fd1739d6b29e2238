package harness

import (
	"testing"

	"fmctl/harness/records"
)

// The key effects are a contract: every row names a harness of the table
// and a deliverable key, every claim names its source, and the interrupt
// key of every harness cancels (or arms the cancel of) a running turn.
func TestKeyEffectsAreSourcedAndAgreeWithTheInterruptKey(t *testing.T) {
	for name, rows := range keyEffects {
		h, ok := Lookup(name)
		if !ok {
			t.Errorf("key effects name %q, which is not a harness of the table", name)
			continue
		}
		seen := map[Key]bool{}
		for _, e := range rows {
			if seen[e.Key] {
				t.Errorf("%s: key %s listed twice", name, e.Key)
			}
			seen[e.Key] = true
			if !validNamedKey(e.Key) {
				t.Errorf("%s: %s is not a key fm-send --key offers", name, e.Key)
			}
			if e.Source == "" {
				t.Errorf("%s %s: a claimed effect names no source", name, e.Key)
			}
		}
		if b := h.KeyEffect(h.InterruptKey).Busy; b != EffectCancelsTurn && b != EffectArmsCancel {
			t.Errorf("%s interrupts with %s, whose busy effect is %s", name, h.InterruptKey, b)
		}
	}
}

func validNamedKey(k Key) bool {
	for _, n := range NamedKeys {
		if n == k {
			return true
		}
	}
	return false
}

// The observed quits (tests/captures): C-c ends an idle codex and an
// opencode in either state; nothing else the five real CLIs were driven
// with quits on one press.
func TestKeysThatEndTheAgent(t *testing.T) {
	want := map[string]Key{"codex": KeyCtrlC, "opencode": KeyCtrlC, "agy": KeyCtrlC}
	for _, h := range Harnesses() {
		for _, e := range h.KeyEffects() {
			if e.EndsAgent() != (want[h.Name] == e.Key) {
				t.Errorf("%s %s: EndsAgent=%v (idle %s, busy %s)", h.Name, e.Key, e.EndsAgent(), e.Idle, e.Busy)
			}
		}
	}
	if e := (Harness{}).KeyEffect(KeyCtrlC); e.Idle != EffectUnknown || e.Busy != EffectUnknown || e.EndsAgent() {
		t.Errorf("an unverified harness's key claims %+v, want unknown", e)
	}
}

// The rounds rule: an interrupt repeats its keys only for a harness whose
// own record says whether the turn still runs, and never where its key at
// an idle agent quits or arms an exit (a repeat racing the turn's end
// would land on the idle agent).
func TestInterruptRoundsRepeatOnlyWhereTheRecordTellsAndTheKeyIsSafe(t *testing.T) {
	for _, h := range Harnesses() {
		if h.Rounds < 1 {
			t.Errorf("%s: interrupt_rounds %d; every harness sends its sequence at least once", h.Name, h.Rounds)
		}
		if h.Rounds == 1 {
			continue
		}
		if !records.Has(h.Name) {
			t.Errorf("%s: %d interrupt rounds, but fmctl cannot read its record to tell a turn still running", h.Name, h.Rounds)
		}
		if idle := h.KeyEffect(h.InterruptKey).Idle; idle == EffectQuits || idle == EffectArmsExit || idle == EffectUnknown {
			t.Errorf("%s: %d interrupt rounds, but %s at an idle agent is %s", h.Name, h.Rounds, h.InterruptKey, idle)
		}
	}
}
