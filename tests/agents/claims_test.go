package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf16"

	"fmctl/harness"
	"fmctl/harness/records"
)

// How long an agent's own record may lag behind fmctl's exit: the CLIs
// write their transcript asynchronously, some only when the request goes out.
const (
	recordLag   = 15 * time.Second
	absenceWait = 4 * time.Second
)

// scen is one running scenario: it collects the verdicts of fmctl's claims
// and the facts behind them.
type scen struct {
	l           *lab
	name        string
	verdict     Verdict
	notes       []string
	ineffective bool // an honest claim that did not achieve the verb's purpose
	// lastInterrupt is the scenario's last interrupt in the tally, for a
	// finding after its verdict (the CLI retried the turn).
	lastInterrupt *interruptResult
}

// errStop ends a scenario early once it cannot go on.
type errStop struct{}

var rank = map[Verdict]int{Backed: 0, Honest: 1, Broken: 2, False: 3}

func (s *scen) mark(v Verdict, format string, args ...any) {
	if s.verdict == "" || rank[v] > rank[s.verdict] {
		s.verdict = v
	}
	s.note(format, args...)
}

// missed records an outcome that was honest but did not do what the verb is
// for (a turn that survived an interrupt, a message never taken).
func (s *scen) missed(format string, args ...any) {
	s.ineffective = true
	s.note("INEFFECTIVE: "+format, args...)
}

func (s *scen) note(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// broken records that the scenario could not reach the state it needs, and
// stops it.
func (s *scen) broken(format string, args ...any) {
	s.mark(Broken, format, args...)
	panic(errStop{})
}

// scenario runs body as one named scenario, records its outcome and returns
// its verdict. A false claim or a broken scenario fails the test unless it is
// a known gap.
func (l *lab) scenario(name string, body func(s *scen)) Verdict {
	l.t.Helper()
	s := &scen{l: l, name: name}
	l.running = name
	defer func() { l.running = "" }()
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(errStop); !ok {
					panic(r)
				}
			}
		}()
		body(s)
	}()
	if s.verdict == "" {
		s.mark(Broken, "the scenario checked no claim")
	}
	o := outcome{harness: l.p.name, scenario: name, verdict: s.verdict, notes: s.notes, ineffective: s.ineffective}
	if s.verdict == False || s.verdict == Broken {
		if gap, ok := knownGap(l.p.name, name); ok {
			o.known = gap
		} else {
			l.t.Errorf("%s/%s: %s\n  %s\nscreen:\n%s", l.p.name, name, s.verdict, strings.Join(s.notes, "\n  "), l.screen(false))
		}
	}
	theLedger.add(o)
	return s.verdict
}

// count is how many record messages equal text, and the first message that
// contains text without equalling it (a glued or altered delivery). Trailing
// blanks do not count: opencode records a multi-line paste with a space
// appended, which is its own doing, not a difference in what it was sent.
func count(msgs []string, text string) (exact int, altered string) {
	text = strings.TrimRight(text, " \t\n")
	probe := text
	if len(probe) > 40 {
		probe = probe[len(probe)-40:]
	}
	for _, m := range msgs {
		switch {
		case strings.TrimRight(m, " \t\n") == text:
			exact++
		case altered == "" && strings.Contains(m, probe):
			altered = m
		}
	}
	return exact, altered
}

func clip(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%.60q...%q (%d bytes)", s, s[len(s)-40:], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// send sends text with fm-send and judges the claim against the record:
// exit 0 must be backed by exactly one identical user message; a refusal
// must leave the record without it; exit 3 promised nothing either way, but
// a duplicated or altered delivery is still false.
func (s *scen) send(text string) result {
	s.l.t.Helper()
	return s.sendWithin(text, recordLag)
}

// sendWithin is send for an agent that may take the message later (queued
// behind a running turn or a retry back-off): exit 0 is judged after lag.
func (s *scen) sendWithin(text string, lag time.Duration) result {
	s.l.t.Helper()
	r := s.l.fm("fm-send", s.l.addr, text)
	s.l.capture(s.name + "-sent")
	s.judgeDelivery(r, text, lag)
	return r
}

// sendWhenReady is sendWithin with --when-ready: fm-send waits (bounded)
// for an agent that would drop the text now to take it.
func (s *scen) sendWhenReady(text string, wait, lag time.Duration) result {
	s.l.t.Helper()
	r := s.l.fm("fm-send", "--when-ready", "--timeout", wait.String(), s.l.addr, "--", text)
	s.l.capture(s.name + "-sent-when-ready")
	s.judgeDelivery(r, text, lag)
	return r
}

// judgeBusyInBackoff judges what status and wait say of an agent the model
// keeps rate-limiting: its turn is running (the CLI retries on its own), so
// activity=idle or a wait --for idle that returns 0 is a false claim.
func (s *scen) judgeBusyInBackoff(nonce string) {
	l := s.l
	l.capture(s.name + "-retrying")
	before := l.retrying()
	st := l.fm("fm-control", "status", l.addr, "--json")
	var got struct {
		Activity string `json:"activity"`
	}
	_ = json.Unmarshal([]byte(st.stdout), &got)
	w := l.fm("fm-control", "wait", l.addr, "--for", "idle", "--timeout", "2s")
	retrying := len(l.stub.CallsFor(nonce))
	// A CLI that gives up on a rate limit within seconds (cline, 6
	// attempts in 5 s) ends its turn as these run: only a turn its record
	// shows running before them and still after makes idle false.
	running := before && !poll(1500*time.Millisecond, func() bool { return !l.retrying() })
	switch {
	case got.Activity == "idle" && running:
		s.mark(False, "status said activity=idle while the CLI retried (%d attempts)", retrying)
	case w.code == 0 && running:
		s.mark(False, "wait --for idle exit 0 (%s) while the CLI retried (%d attempts)", oneLine(w.stdout), retrying)
	case !running && (got.Activity == "idle" || w.code == 0):
		s.mark(Backed, "the CLI gave the turn up (%d attempts): the record shows no turn, status said activity=%s, wait --for idle exit %d", retrying, got.Activity, w.code)
	case got.Activity == "busy":
		s.mark(Backed, "in its back-off (%d attempts) status said activity=busy and wait --for idle exit %d", retrying, w.code)
	default:
		s.mark(Honest, "in its back-off (%d attempts) status said activity=%q and wait --for idle exit %d", retrying, got.Activity, w.code)
	}
}

// judgeWaitIdle judges a wait --for idle by whether the record shows a turn
// running once it returned: exit 0 then is false, and a wait that gave up
// on an idle agent is honest but ineffective.
func (s *scen) judgeWaitIdle(r result, running bool) {
	switch {
	case r.code == 0 && running:
		s.mark(False, "wait --for idle exit 0 (%s), but the record shows the turn running", oneLine(r.stdout))
	case r.code == 0:
		s.mark(Backed, "wait --for idle exit 0 in %v; the record shows no turn running", r.elapsed.Round(time.Millisecond))
	default:
		s.mark(Honest, "wait exit %d: %s", r.code, oneLine(r.stdout+r.stderr))
		if !running {
			s.missed("the agent was idle, and wait did not say so")
		}
	}
}

// messageIDHint is the wait an unconfirmed fm-send names for its message.
var messageIDHint = regexp.MustCompile(`--message-id (m[0-9T]+-[0-9a-f]+)`)

// judgeWaitSubmitted judges an exit-3 send and then the wait for it: exit 0
// of the wait must be backed by exactly one copy in the record, and a
// message that never arrives is honest but ineffective.
func (s *scen) judgeWaitSubmitted(r result, text, messageID string, lag time.Duration) {
	l := s.l
	w := l.fm("fm-control", "wait", l.addr, "--for", "submitted", "--message-id", messageID, "--timeout", lag.String())
	if w.code != 0 {
		time.Sleep(absenceWait)
	}
	exact, altered := count(l.messages(), text)
	submit := "unrecorded"
	if strings.Contains(r.stderr, "into its queue") {
		submit = "queued"
	}
	switch {
	case exact == 0 && altered != "" && submit == "queued":
		// What fm-send said of a queued text: it may reach the agent
		// joined to the others queued with it.
		s.mark(Honest, "exit 3 (submit=queued); wait --for submitted exit %d; the record holds it joined to others, as fm-send said it may: %s", w.code, clip(altered))
	case exact > 1 || altered != "":
		s.mark(False, "exit 3 (submit=%s), then wait --for submitted exit %d, and the record holds %d exact copies, altered %s", submit, w.code, exact, clip(altered))
	case w.code == 0 && exact == 1:
		s.mark(Honest, "exit 3 (submit=%s); wait --for submitted exit 0 in %s, record holds %s once", submit, w.elapsed.Round(time.Millisecond), clip(text))
	case w.code == 0 && exact == 0 && field(w.stdout, "proof") == "log":
		// The agent's log took it (cline); its record gets the text when
		// that turn ends, judged at the lab's close.
		s.mark(Honest, "exit 3 (submit=%s); wait --for submitted exit 0 proof=log in %s", submit, w.elapsed.Round(time.Millisecond))
		l.logged = append(l.logged, loggedSend{harness: l.current, scenario: s.name, text: text})
	case w.code == 0:
		s.mark(False, "exit 3 (submit=%s); wait --for submitted exit 0, but the record holds it %d times", submit, exact)
	default:
		s.mark(Honest, "exit 3 (submit=%s); wait --for submitted exit %d: %s; the record holds it %d times", submit, w.code, oneLine(w.stderr), exact)
		if exact == 0 {
			s.missed("the message never reached the record")
		}
	}
}

func (s *scen) judgeDelivery(r result, text string, lag time.Duration) {
	l := s.l
	switch r.code {
	case 0:
		var exact int
		var altered string
		if field(r.stdout, "proof") == "log" {
			s.judgeLoggedSend(r, text)
			return
		}
		poll(lag, func() bool { exact, altered = count(l.messages(), text); return exact > 0 })
		switch {
		case exact == 1 && altered == "":
			s.mark(Backed, "exit 0, record holds %s once", clip(text))
		case exact > 1:
			s.mark(False, "exit 0, but the record holds %s %d times", clip(text), exact)
		case altered != "":
			s.mark(False, "exit 0, but the record holds %s instead of %s (glued or altered)", clip(altered), clip(text))
		default:
			s.mark(False, "exit 0 (%s), but the record never received %s; record: %s", strings.TrimSpace(r.stdout), clip(text), clipAll(l.messages()))
		}
	case 3:
		// An unconfirmed send names its message id; the wait fmctl offers
		// for it is a claim of its own, judged by the same record. A queued
		// message (gemini) reaches the record only when the turn ends.
		if m := messageIDHint.FindStringSubmatch(r.stderr); m != nil {
			s.judgeWaitSubmitted(r, text, m[1], lag)
			return
		}
		time.Sleep(absenceWait)
		exact, altered := count(l.messages(), text)
		switch {
		case exact > 1 || altered != "":
			s.mark(False, "exit 3, and the record holds %d exact copies, altered %s", exact, clip(altered))
		default:
			s.mark(Honest, "exit 3 (unconfirmed); the record holds it %d times", exact)
			if exact == 0 {
				s.missed("the message never reached the record")
			}
		}
	default:
		time.Sleep(absenceWait)
		if exact, altered := count(l.messages(), text); exact > 0 || altered != "" {
			s.mark(False, "exit %d (%s), but the record received it anyway (%d exact, altered %s)", r.code, oneLine(r.stderr), exact, clip(altered))
		} else {
			s.mark(Honest, "exit %d: %s", r.code, oneLine(r.stderr))
		}
	}
}

// judgeCommand judges a slash command's send, sent once in its lab: exit 0
// claims the agent took it, which its record must show once, as a user
// message or as a command it ran or refused itself (claude's). Another
// exit is left to the send that follows it.
func (s *scen) judgeCommand(r result, cmd string) {
	l := s.l
	if r.code == 3 && strings.Contains(r.stderr, "opened its") {
		// submit=dialog: the command's own dialog is up, which the
		// agent's signatures must read on its screen now.
		h, _ := harness.Lookup(l.current)
		sig, _ := h.Screen()
		if d := sig.ReadScreen(strings.Split(l.screen(false), "\n")).Dialog; d != "" {
			s.mark(Honest, "exit 3 in %v: %s opened its %s dialog for %s", r.elapsed.Round(time.Millisecond), l.current, d, cmd)
		} else {
			s.mark(False, "exit 3 (%s), but no dialog is drawn", oneLine(r.stderr))
		}
		return
	}
	if r.code != 0 {
		return
	}
	var n int
	poll(recordLag, func() bool {
		n, _ = count(append(l.messages(), l.commands()...), cmd)
		return n > 0
	})
	switch n {
	case 1:
		s.mark(Backed, "exit 0, the record holds %s once", cmd)
	case 0:
		s.mark(False, "exit 0 (%s), but the record never took %s", oneLine(r.stdout), cmd)
	default:
		s.mark(False, "exit 0, but the record holds %s %d times", cmd, n)
	}
}

func clipAll(msgs []string) string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = clip(m)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// field reads key=value from an outcome line.
func field(out, key string) string {
	for _, w := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(w, key+"="); ok {
			return v
		}
	}
	return ""
}

// waitBusy sends a message that keeps its turn open and waits until the
// agent's record and the model stub both show the turn running.
func (s *scen) waitBusy(text string) {
	s.l.t.Helper()
	r := s.send(text)
	if r.code != 0 && r.code != 3 {
		s.broken("could not start a busy turn: %s", r)
	}
	if !poll(recordLag, func() bool { return s.l.turnRunning() && s.l.stub.Held() > 0 }) {
		s.broken("no busy turn after %s: record running=%v, stub held=%d", clip(text), s.l.turnRunning(), s.l.stub.Held())
	}
	s.l.capture(s.name + "-busy")
}

// gone checks the claim that the agent stopped: no process left under the
// pane's shell and no turn still held open at the model stub (a turn that
// lives on in a background daemon is not stopped).
func (s *scen) gone(r result) {
	l := s.l
	stopped := poll(5*time.Second, func() bool { return !l.agentAlive() })
	released := poll(5*time.Second, func() bool { return l.stub.Held() == 0 })
	switch {
	case !stopped:
		s.mark(False, "exit 0 (%s), but the pane still runs %v", oneLine(r.stdout), l.agentProcesses())
	case !daemonsAsSaid(l, r.stdout):
		s.mark(False, "exit 0 (%s), but left= names no running daemon of %s", oneLine(r.stdout), l.current)
	case !released:
		s.mark(False, "exit 0 (%s), but a turn is still running at the model (%d held request)", oneLine(r.stdout), l.stub.Held())
	default:
		s.mark(Backed, "exit 0, no agent process left and no turn running")
	}
}

// daemonsAsSaid checks an outcome's left= claim: each pid it names runs,
// and its command line carries the harness's daemon argument.
func daemonsAsSaid(l *lab, stdout string) bool {
	h, _ := harness.Lookup(l.current)
	for _, pid := range leftPids(stdout) {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || h.Daemon == nil || !slices.Contains(strings.Split(string(cmdline), "\x00"), h.Daemon.Arg) {
			return false
		}
	}
	return true
}

// markerPath is a file a shell would create if it ran a message as a command.
func (l *lab) markerPath() string { return l.dir + "/shell-ran-" + randHex(4) }

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// judgeLoggedSend judges an exit 0 proved by the agent's log of a prompt of
// the text's length (cline logs session.input_sent as it takes a prompt,
// and writes the prompt to its record only when the turn ends): the log
// must show a prompt of that length taken during the call, and the model
// stub a request whose newest prompt carries the text, unless the model is
// down. Whether the record then gets the text exactly once is judged when
// the lab closes (judgeLogged).
func (s *scen) judgeLoggedSend(r result, text string) {
	l := s.l
	logger, ok := l.reader().(records.SubmitLogger)
	if !ok {
		s.mark(False, "exit 0 proof=log, but %s logs no prompts", l.current)
		return
	}
	// Called as the send returns: the log's stamp of the prompt falls
	// within the call (a second's slack for the clocks' rounding).
	since := time.Now().Add(-r.elapsed - time.Second)
	length := len(utf16.Encode([]rune(strings.TrimRight(text, " \t\r\n"))))
	taken := func() bool {
		subs, err := logger.Submissions()
		if err != nil {
			return false
		}
		for _, sub := range subs {
			if sub.Length == length && !sub.Queued && !sub.Time.Before(since) {
				return true
			}
		}
		return false
	}
	asked := func() bool { return len(l.stub.CallsFor(text)) > 0 || l.stub.DownUntil().After(time.Now()) }
	switch {
	case !taken():
		s.mark(False, "exit 0 proof=log (%s), but %s's log shows no prompt of %d units taken since the call", oneLine(r.stdout), l.current, length)
	case !poll(recordLag, asked):
		s.mark(False, "exit 0 proof=log, but the model was never asked with %s", clip(text))
	default:
		s.mark(Backed, "exit 0 proof=log: %s's log took a prompt of %d units and the model was asked with %s; its record is judged at the lab's close", l.current, length, clip(text))
		l.logged = append(l.logged, loggedSend{harness: l.current, scenario: s.name, text: text})
	}
}

// judgeLogged judges, the lab's scenarios over, that each send confirmed
// by proof=log reached its agent's record exactly once, as cline writes a
// prompt when its turn ends (answered, failed or cancelled).
func (l *lab) judgeLogged(s *scen) {
	l.settle(15 * time.Second)
	var missing []string
	for _, ls := range l.logged {
		if exact, altered := count(l.messagesOf(ls.harness), ls.text); exact != 1 || altered != "" {
			missing = append(missing, fmt.Sprintf("%s: %s held %d times, altered %s", ls.scenario, clip(ls.text), exact, clip(altered)))
		}
	}
	if len(missing) > 0 {
		s.mark(False, "sends confirmed by the log that the record did not get once: %s", strings.Join(missing, "; "))
		return
	}
	s.mark(Backed, "each of the %d sends confirmed by the log reached the record once", len(l.logged))
}
