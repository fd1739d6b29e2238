package agents

import (
	"strings"
	"testing"
)

// TestLedgerFailuresLast pins the closing lines a cut CI log keeps: each
// false or broken scenario that is no known gap, then each group that
// failed outside a verdict, with the scenario it cut short and its cause
// (the first report of a group wins, since it carries the cause).
func TestLedgerFailuresLast(t *testing.T) {
	l := newLedger()
	l.add(outcome{harness: "pi", scenario: "reply", verdict: Backed, notes: []string{"fine"}})
	l.add(outcome{harness: "pi", scenario: "outage-queue-drop", verdict: False, notes: []string{"gap"}, known: "a gap"})
	l.add(outcome{harness: "gemini", scenario: "hang-stalled", verdict: Broken, notes: []string{"a", "b"}})
	l.abort("TestRealAgents/gemini/turns", "tool-calls", "fm-send did not finish\nwithin 3 minutes")
	l.abort("TestRealAgents/gemini/turns", "", "")
	l.abort("TestRealAgents/qwen/busy", "", "")
	var b strings.Builder
	l.printFailures(&b)
	want := "real-agent tier: broken gemini/hang-stalled: a; b\n" +
		"real-agent tier: FAILED TestRealAgents/gemini/turns failed during scenario tool-calls: fm-send did not finish\n" +
		"real-agent tier: FAILED TestRealAgents/qwen/busy failed\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
