package agents

import (
	"strings"
	"testing"
	"time"
)

// TestClockTable pins how the latency table reads its samples: the lag is
// answer minus act (negative when fmctl answered first), the agent's part
// act minus call start, and a verb whose act was never seen says so.
func TestClockTable(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := &agentClock{}
	for _, s := range []clockSample{
		{harness: "pi", verb: "exit", start: at(0), act: at(500), answer: at(600), evidence: "/proc"},
		{harness: "pi", verb: "exit", start: at(0), act: at(700), answer: at(900), evidence: "/proc"},
		{harness: "pi", verb: "interrupt", start: at(0), act: at(300), answer: at(100), evidence: "stream aborted"},
		{harness: "pi", verb: "wait waiting", start: at(0), answer: at(50)},
		{harness: "claude", verb: "exit", start: at(0), act: at(10), answer: at(20), evidence: "/proc"},
	} {
		c.add(s)
	}
	rows := c.rows()
	var got []string
	for _, r := range rows {
		got = append(got, r.harness+" "+r.verb+": "+strings.Join(r.cells(), ", "))
	}
	want := []string{
		"pi interrupt: 1, 1, -200 ms, -200 ms, 300 ms, 300 ms, stream aborted ×1",
		"pi exit: 2, 2, 100 ms, 200 ms, 500 ms, 700 ms, /proc ×2",
		"pi wait waiting: 1, 0, —, no act evidence, , , , ",
		"claude exit: 1, 1, 10 ms, 10 ms, 10 ms, 10 ms, /proc ×1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
