package agents

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/harness"
	"fmctl/tests/agents/stubmodel"
)

// NotApplicable: the scenario's state does not exist for this harness (pi
// has no permission dialog); the cell says so rather than being skipped.
const NotApplicable Verdict = "n/a"

func init() { rank[NotApplicable] = 0 }

// waitingLag is how long after a dialog is drawn status may still not say
// waiting: the screen is read on every status, so only the polls between.
const waitingLag = 1500 * time.Millisecond

// permissionGroup: an agent launched with --permissions ask, at the
// permission dialog its own tool call raises. status must say waiting for
// a permission as soon as the dialog is drawn, fm-send must refuse at once
// without typing into it, an interrupt must end the turn and exit must
// leave neither agent nor turn. The judge is the agent's record: the turn
// runs and the tool has not, while the dialog is up.
func permissionGroup(t *testing.T, p profile) {
	h, _ := harness.Lookup(p.name)
	if _, err := h.Mode(harness.PermAsk); err != nil {
		notApplicable(t, p, err)
		return
	}
	l := newLab(t, p, "permission")
	if l.scenario("spawn-ask", func(s *scen) { spawnedAsk(l, s) }) == Broken {
		return
	}
	l.settleLaunch()
	var dir, nonce string
	l.scenario("waiting-at-permission", func(s *scen) {
		dir, nonce = l.raiseDialog(s)
		l.judgeWaiting(s, dir, nonce)
	})
	l.scenario("send-at-permission", func(s *scen) {
		l.requireDialog(s, dir)
		text := "typed at the dialog " + randHex(3)
		r := l.fm("fm-send", l.addr, text)
		l.capture("send-at-permission")
		s.judgeDelivery(r, text, recordLag)
		switch {
		case r.code == 0:
			s.mark(False, "fm-send exit 0 at the permission dialog: %s", oneLine(r.stdout))
		case r.elapsed > 3*time.Second:
			s.missed("the refusal took %v, not at once", r.elapsed.Round(time.Millisecond))
		case !strings.Contains(r.stderr, "hint:"):
			s.missed("the refusal names no key that answers the dialog: %s", oneLine(r.stderr))
		default:
			s.note("refused in %v: %s", r.elapsed.Round(time.Millisecond), hintLine(r.stderr))
		}
		if exists(filepath.Join(dir, stubmodel.ShellFile)) {
			s.mark(False, "the tool ran after fm-send: something answered the dialog")
		}
		if _, up := l.dialogUp(); !up {
			s.mark(False, "the dialog is gone after fm-send: something was typed into it")
		}
	})
	l.scenario("interrupt-at-permission", func(s *scen) {
		l.requireDialog(s, dir)
		s.interrupt()
		if exists(filepath.Join(dir, stubmodel.ShellFile)) {
			s.mark(False, "the tool ran: the interrupt approved the call")
		}
		l.judgeAfterDialog(s)
	})
	recoverIdle(l)
	l.settle(20 * time.Second)
	l.scenario("exit-at-permission", func(s *scen) {
		dir, _ := l.raiseDialog(s)
		s.exit("exit-at-permission")
		if exists(filepath.Join(dir, stubmodel.ShellFile)) {
			s.mark(False, "the tool ran: the exit approved the call")
		}
	})
}

// notApplicable records the harness's permission cells as not applicable,
// with the capability table's reason, and checks the claim behind it:
// fm-spawn --permissions ask refuses, launching nothing.
func notApplicable(t *testing.T, p profile, why error) {
	l := newLab(t, p, "permission")
	l.scenario("permission-dialog", func(s *scen) {
		r := l.spawn("--permissions", "ask")
		switch {
		case r.code == 0:
			s.mark(False, "fm-spawn --permissions ask exit 0, but %v", why)
		case l.agentAlive():
			s.mark(False, "fm-spawn --permissions ask exit %d, but an agent runs: %v", r.code, l.agentProcesses())
		default:
			s.mark(NotApplicable, "%v; fm-spawn --permissions ask refused (exit %d): %s", why, r.code, oneLine(r.stderr))
		}
	})
}

// spawnedAsk launches the task in ask mode, judged as every spawn is, and
// checks the mode was recorded.
func spawnedAsk(l *lab, s *scen) {
	spawned(l, s, "--permissions", "ask")
	if st := l.status(); st["permissions"] != "ask" {
		s.broken("the task's status does not say permissions=ask: %v", st)
	}
}

// raiseDialog sends a turn whose tool call the agent must ask about, and
// returns the tool's directory and the turn's nonce once the dialog is
// drawn.
func (l *lab) raiseDialog(s *scen) (string, string) {
	dir := l.toolDir()
	nonce := randHex(3)
	text := "run a tool " + stubmodel.ToolWord + " " + dir + " " + nonce + " " + stubmodel.EscalateWord
	if r := s.send(text); r.code == 3 {
		if n, _ := count(l.messages(), text); n == 0 {
			// Scaffolding, not a step under test: the send was judged
			// above; the dialog scenarios need the turn. opencode on the
			// loaded machine dropped what fm-send typed right after its
			// slow launch turn, so the test types it again.
			l.retype(text)
			s.note("the test typed the prompt again and pressed Enter (fm-send left it unconfirmed)")
		}
	}
	if !poll(60*time.Second, func() bool { return madeToolCall(l, nonce) }) {
		s.broken("the model's tool call never went out: %s", outcomes(l, nonce))
	}
	l.requireDialog(s, dir)
	return dir, nonce
}

// retype clears the composer and types text with tmux directly, then
// Enter: scaffolding, never a step under test.
func (l *lab) retype(text string) {
	pane, _ := l.pane()
	if pane == "" {
		return
	}
	l.rawKeys("C-u")
	l.tmuxCmd("send-keys", "-t", pane, "-l", text).Run()
	time.Sleep(time.Second)
	l.rawKeys("Enter")
}

// requireDialog waits until the permission dialog is on screen, capturing
// it; a screen that settles with no dialog signature matching is broken,
// and the capture is the fixture to read one from.
func (l *lab) requireDialog(s *scen, dir string) {
	var name string
	up := poll(30*time.Second, func() bool {
		var ok bool
		name, ok = l.dialogUp()
		return ok || exists(filepath.Join(dir, stubmodel.ShellFile))
	})
	l.capture(s.name + "-dialog")
	switch {
	case exists(filepath.Join(dir, stubmodel.ShellFile)):
		s.broken("the tool ran without a permission dialog (ask mode did not ask)")
	case !up:
		s.broken("no permission dialog signature matched the screen within 30 s; record turn running=%v", l.turnRunning())
	}
	s.note("the %s dialog is on screen", name)
}

// dialogUp reads the screen by the harness's signatures: the name of a
// permission dialog on it.
func (l *lab) dialogUp() (string, bool) {
	name, up := l.dialogOn(l.current)
	theClock.sawDialog(l, up)
	return name, up
}

// dialogOn reads the screen by harness name's signatures.
func (l *lab) dialogOn(name string) (string, bool) {
	h, _ := harness.Lookup(name)
	sig, ok := h.Screen()
	if !ok {
		return "", false
	}
	st := sig.ReadScreen(strings.Split(l.screen(false), "\n"))
	d, ok := sig.Dialog(st.Dialog)
	return d.Name, ok && d.Waits == harness.WaitPermission
}

// turnOpen reports whether the turn of nonce is still open at its dialog:
// the agent's record shows it running, or, where the record cannot show a
// turn held at a tool confirmation (gemini writes the tool call only once
// it has run), the model's last answer for it was a tool call whose result
// has not come (which stays so after a cancel: only while the dialog is up).
func (l *lab) turnOpen(nonce string) (bool, string) {
	if l.turnRunning() {
		return true, "the record shows the turn running"
	}
	calls := l.stub.CallsFor(nonce)
	if len(calls) > 0 && calls[len(calls)-1].Outcome == "tool-call" {
		return true, "the model's tool call awaits its result (the record shows no turn running)"
	}
	return false, "neither the record nor the model shows the turn open"
}

// judgeWaiting runs wait --for waiting while the dialog is up and judges
// it, and status's waiting_for: the turn is open and the tool has not run.
func (l *lab) judgeWaiting(s *scen, dir, nonce string) {
	drawn := time.Now() // requireDialog saw it at most a poll ago
	r := l.fm("fm-control", "wait", l.addr, "--for", "waiting", "--timeout", "20s")
	lag := time.Since(drawn)
	st := l.status()
	row := l.listRow()
	running, why := l.turnOpen(nonce)
	ran := exists(filepath.Join(dir, stubmodel.ShellFile))
	switch {
	case r.code != 0:
		s.mark(Honest, "wait --for waiting exit %d: %s", r.code, oneLine(r.stderr))
		s.missed("the agent waited at its permission dialog, and wait did not say so")
	case ran:
		s.mark(False, "wait --for waiting exit 0, but the tool has run")
	case !running:
		s.mark(False, "wait --for waiting exit 0, but %s", why)
	case st["activity"] != "waiting":
		s.mark(False, "wait --for waiting exit 0, then status said activity=%s at the same dialog", st["activity"])
	case st["waiting_for"] != harness.WaitPermission:
		s.mark(False, "status activity=waiting waiting_for=%s at a permission dialog", st["waiting_for"])
	case row["state"] != "alive" || row["activity"] != "waiting" || row["waiting_for"] != harness.WaitPermission:
		// list reads every task's screen as status does (issue 39): at
		// the same dialog it says what status says.
		s.mark(False, "status said waiting for a permission, and list then said state=%s activity=%s waiting_for=%s at the same dialog", row["state"], row["activity"], row["waiting_for"])
	default:
		s.mark(Backed, "wait --for waiting exit 0 %v after the dialog was seen (evidence=%s); status and list waiting_for=%s; %s, and the tool has not run",
			lag.Round(time.Millisecond), st["evidence"], st["waiting_for"], why)
		if lag > waitingLag {
			s.missed("waiting was reported %v after the dialog was on screen", lag.Round(time.Millisecond))
		}
	}
}

// status reads fm-control status --json as its string facts.
func (l *lab) status() map[string]string {
	r := l.fm("fm-control", "status", l.addr, "--json")
	var raw map[string]any
	out := map[string]string{}
	if json.Unmarshal([]byte(r.stdout), &raw) != nil {
		return out
	}
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// listRow is the lab's task (on this machine) as fm-control list --json
// shows it, its string facts.
func (l *lab) listRow() map[string]string {
	r := l.fm("fm-control", "list", "--json")
	var raw struct {
		Tasks []map[string]any `json:"tasks"`
	}
	out := map[string]string{}
	if json.Unmarshal([]byte(r.stdout), &raw) != nil {
		return out
	}
	for _, t := range raw.Tasks {
		if t["id"] != l.id {
			continue
		}
		for k, v := range t {
			if s, ok := v.(string); ok {
				out[k] = s
			}
		}
	}
	return out
}

// judgeAfterDialog checks status once an interrupt dismissed the dialog:
// the agent waits for nothing once the dialog is gone and the turn over, so
// a waiting report left standing is false.
func (l *lab) judgeAfterDialog(s *scen) {
	poll(3*time.Second, func() bool { _, up := l.dialogUp(); return !up })
	st := l.status()
	_, up := l.dialogUp()
	switch {
	case st["activity"] == "waiting" && !up:
		s.mark(False, "status says activity=waiting waiting_for=%s (evidence=%s) after the dialog is gone; record turn running=%v", st["waiting_for"], st["evidence"], l.turnRunning())
	default:
		s.note("status after: activity=%s evidence=%s (dialog up=%v, record turn running=%v)", st["activity"], st["evidence"], up, l.turnRunning())
	}
}

func hintLine(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "hint:") {
			return line
		}
	}
	return oneLine(stderr)
}
