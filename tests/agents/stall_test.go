package agents

import (
	"strings"
	"time"

	"fmctl/tests/agents/stubmodel"
)

// stallAfter is the lab's FM_STALL_AFTER for the stall scenario: long
// enough that a CLI writing its record as a turn starts (the prompt, a
// request record) is past that write, short enough for the tier's clock.
const stallAfter = 12 * time.Second

// stallScenario is issue 38's "a hang is reported stalled within its
// threshold": a turn the model holds open with nothing streamed shows no
// progress in the agent's record, so `wait --for idle` must end on it with
// exit 5 (agent-stalled) after FM_STALL_AFTER, not wait forever nor call it
// idle, and status must say attention=stalled. The hang is then
// interrupted, judged as every interrupt is.
func stallScenario(l *lab) {
	l.scenario("hang-stalled", func(s *scen) {
		start := time.Now()
		s.waitBusy("hang until the stall is seen " + stubmodel.HangWord + " " + randHex(3))
		since := func() time.Duration { return time.Since(start) }
		stall := []string{"FM_STALL_AFTER=" + stallAfter.String()}
		r := l.fmWith(stall, "fm-control", "wait", l.addr, "--for", "idle", "--timeout", "60s")
		held := l.stub.Held() > 0
		switch {
		case r.code == 5 && since() < stallAfter:
			s.mark(False, "wait exit 5 (stalled) %v after the prompt, before FM_STALL_AFTER=%v", since().Round(time.Millisecond), stallAfter)
		case r.code == 5 && held:
			s.mark(Backed, "wait exit 5 after %v: stalled, and the model still holds the request with nothing sent (%s)", r.elapsed.Round(time.Millisecond), oneLine(r.stdout+r.stderr))
		case r.code == 5:
			s.mark(Honest, "wait exit 5 after %v, but the CLI had closed the held request: %s", r.elapsed.Round(time.Millisecond), oneLine(r.stdout+r.stderr))
		case r.code == 0 && (held || l.turnRunning()):
			s.mark(False, "wait --for idle exit 0 while the turn hangs (model holds it: %v)", held)
		default:
			s.mark(Honest, "wait exit %d after %v: %s", r.code, r.elapsed.Round(time.Millisecond), oneLine(r.stdout+r.stderr))
			if held {
				s.missed("a hang of %v was not reported stalled (FM_STALL_AFTER=%v)", since().Round(time.Second), stallAfter)
			}
		}
		if st := l.fmWith(stall, "fm-control", "status", l.addr); held && !strings.Contains(st.stdout, "attention=stalled") {
			s.missed("status did not say attention=stalled of a hang held %v: %s", since().Round(time.Second), oneLine(st.stdout))
		}
		s.interrupt()
	})
	recoverIdle(l)
}
