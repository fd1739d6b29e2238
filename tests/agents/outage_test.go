package agents

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"fmctl/harness"
	"fmctl/harness/records"
	"fmctl/tests/agents/stubmodel"
)

// outageFor is how long the outage world's API refuses connections: long
// enough to outlast every verb the group runs into it, a slow starter's
// relaunch included (issue 38).
func outageFor(p profile) time.Duration {
	if p.slowStart {
		return 300 * time.Second
	}
	return 180 * time.Second
}

// outage is one run of the outage world: what was sent into it and what
// the verbs said of it, for the judgements made once the agent is stopped.
type outage struct {
	l       *lab
	pending []pendingSend   // sends that exited 3: their fate is judged later
	named   map[string]bool // message ids a verb named flushed, dropped or untaken
	// letGo are the ids an interrupt named untaken: the agent let go of
	// them, so none may reach the record later.
	letGo  map[string]bool
	nonces []string  // the fresh agent's turns
	exited time.Time // when the fresh agent was stopped
}

// pendingSend is a send that exited 3; queued: fm-send said the agent
// took it into its queue, which it may submit joined to others.
type pendingSend struct {
	text, id, scenario string
	queued             bool
}

// outageGroup: the model API refuses connections from the start of a turn
// for longer than every verb here takes. Five sends, three queued sends
// and an interrupt (plain, then --drop-queue), wait --for idle, an exit of
// the fresh agent, a relaunch whose agent retries its launch turn and its
// exit, all during the outage; then a relaunched agent waited on until it
// is idle after the outage ends, its turn's outcome, and a send.
func outageGroup(t *testing.T, p profile) {
	l := spawnedLab(t, p, "outage")
	if l == nil {
		return
	}
	o := &outage{l: l, named: map[string]bool{}, letGo: map[string]bool{}}
	if l.scenario("outage-start", func(s *scen) { o.start(s, outageFor(p)) }) == Broken {
		return
	}
	for i := 1; i <= 5; i++ {
		l.scenario(fmt.Sprintf("outage-send-%d", i), func(s *scen) {
			o.inOutage(s)
			o.send(s, fmt.Sprintf("sent into the outage %d of five %s", i, randHex(3)))
		})
	}
	l.scenario("outage-queue-interrupt", func(s *scen) { o.queueThenInterrupt(s, false) })
	l.scenario("outage-queue-drop", func(s *scen) { o.queueThenInterrupt(s, true) })
	l.scenario("outage-wait-idle-during", func(s *scen) {
		o.inOutage(s)
		r := l.fm("fm-control", "wait", l.addr, "--for", "idle", "--timeout", "8s")
		s.judgeWaitIdle(r, !poll(1500*time.Millisecond, func() bool { return !l.retrying() }))
	})
	l.scenario("outage-exit-fresh", func(s *scen) {
		o.inOutage(s)
		o.exit(s)
		o.exited = time.Now()
	})
	l.scenario("outage-sends-fate", o.fate)
	if l.scenario("outage-relaunch", o.relaunch) != Broken && l.agentAlive() {
		l.scenario("outage-exit-relaunched", func(s *scen) {
			o.inOutage(s)
			o.exit(s)
		})
	}
	if !l.agentAlive() && l.scenario("outage-relaunch-to-wait", o.relaunch) == Broken {
		return
	}
	since := time.Now()
	l.scenario("outage-wait-idle-after", func(s *scen) {
		left := max(time.Until(l.stub.DownUntil()), 0)
		r := l.fm("fm-control", "wait", l.addr, "--for", "idle", "--timeout", (left + 90*time.Second).Round(time.Second).String())
		s.judgeWaitIdle(r, !poll(1500*time.Millisecond, func() bool { return !l.turnRunning() }))
		s.note("the wait returned %v after the outage ended", time.Since(l.stub.DownUntil()).Round(time.Second))
		s.judgeTurnAfter(l.briefPath(), since)
	})
	// A CLI that gave its turns up is idle before the outage ends: the
	// checks of what comes after wait for the API to be back.
	l.awaitUp()
	l.scenario("outage-stopped-stay-stopped", o.stayedStopped)
	l.scenario("outage-send-after", func(s *scen) { s.send("after the outage " + randHex(3)) })
	l.settle(30 * time.Second)
}

// start sends the turn that takes the API away and judges what status and
// wait say once the CLI meets the refused connections.
func (o *outage) start(s *scen, d time.Duration) {
	l := o.l
	nonce := randHex(3)
	o.nonces = append(o.nonces, nonce)
	s.send(fmt.Sprintf("the model API goes away %s%d %s", stubmodel.DownWord, int(d/time.Second), nonce))
	if !poll(30*time.Second, func() bool { return hadOutcome(l, nonce, stubmodel.Down.String()) }) {
		s.broken("the turn never reached the model: %s", outcomes(l, nonce))
	}
	time.Sleep(3 * time.Second) // the CLI meets the refused connections
	s.judgeFailing(nonce)
}

// inOutage stops a step that would no longer run in the outage, and puts
// back into its retries an agent that gave its turn up: a step in the
// outage meets an agent retrying wherever its CLI retries at all.
func (o *outage) inOutage(s *scen) {
	l := o.l
	if left := time.Until(l.stub.DownUntil()); left < 5*time.Second {
		s.broken("the outage ends in %v, before this step: outageFor is too short", left.Round(time.Second))
	}
	// Between two attempts pi draws its working line, not its retry.
	if poll(3*time.Second, l.retrying) || !l.agentAlive() {
		return
	}
	nonce := randHex(3)
	o.nonces = append(o.nonces, nonce)
	s.note("the CLI had given its turn up; a new turn goes into the outage")
	o.send(s, "back into the outage "+nonce)
	// The step meets the turn once it runs, not the moments after the
	// submit before the CLI reports it (issue 22's wait gap, its own case).
	poll(10*time.Second, func() bool { return l.status()["activity"] == "busy" })
}

// retrying reports whether the agent is in a turn: its record shows one
// running, or, for a CLI whose record reads a turn over while it waits out
// a retry (pi records the failed attempt first), its screen draws the
// retry the capability table names (DropsInput), or its busy mark: the
// attempt itself (pi draws "Working..." then, and records it only when it
// fails again).
func (l *lab) retrying() bool {
	if l.turnRunning() {
		return true
	}
	h, ok := harness.Lookup(l.current)
	if !ok {
		return false
	}
	sig, ok := h.Screen()
	if !ok || len(sig.DropsInput) == 0 {
		return false
	}
	st := sig.ReadScreen(strings.Split(l.screen(false), "\n"))
	return st.Dropping || st.Busy
}

// send sends text into the outage and judges it: exit 0 by the record
// now; a refusal by the record's not holding it; an unconfirmed send
// (queued behind the retries) later, by fate, once the agent is stopped.
func (o *outage) send(s *scen, text string) {
	l := o.l
	r := l.fm("fm-send", l.addr, text)
	l.capture(s.name + "-sent")
	if r.code != 3 {
		s.judgeDelivery(r, text, recordLag)
		return
	}
	queued := strings.Contains(r.stderr, "into its queue")
	o.pending = append(o.pending, pendingSend{text: text, id: messageIDOf(r.stderr), scenario: s.name, queued: queued})
	// A queued text may reach the record joined to the others queued
	// with it: fm-send said so.
	if exact, altered := count(l.messages(), text); exact > 1 || (altered != "" && !queued) {
		s.mark(False, "exit 3, and the record holds %d exact copies, altered %s", exact, clip(altered))
		return
	}
	s.mark(Honest, "exit 3 (%s); what became of it is judged once the agent is stopped", oneLine(r.stderr))
}

// queueThenInterrupt sends three texts into the retrying agent, then
// interrupts it (with --drop-queue when drop) and judges what the
// interrupt says of the queue against the record: an agent busy with the
// queued texts after the cancel must be said so (queue=flushed
// activity=busy); --drop-queue's exit 0 must leave it idle, and its
// refusal must name the queue (queue-not-dropped).
func (o *outage) queueThenInterrupt(s *scen, drop bool) {
	l := o.l
	o.inOutage(s)
	var texts []string
	for i := 1; i <= 3; i++ {
		text := fmt.Sprintf("queued in the outage %d of three %s", i, randHex(3))
		o.send(s, text)
		texts = append(texts, text)
	}
	retrying := l.retrying()
	args := []string{"interrupt", l.addr}
	if drop {
		args = append(args, "--drop-queue")
	}
	called := time.Now()
	r := l.fm("fm-control", args...)
	l.capture(s.name + "-interrupted")
	o.noteNamed(r)
	for _, id := range strings.Split(field(r.stdout, "untaken"), ",") {
		if id != "" {
			o.letGo[id] = true
		}
	}
	ended := poll(5*time.Second, func() bool { return !l.turnRunning() })
	taken := false
	for _, text := range texts {
		if exact, altered := count(l.messages(), text); exact > 0 || altered != "" {
			taken = true
		}
	}
	// cline flushes its queue oldest first (the outage's earlier sends
	// before these) and records a prompt only when its turn ends: its log
	// shows the queued prompt it started a run with after the cancel.
	taken = taken || l.queuedRunStartedSince(called)
	cancel, queue, activity := field(r.stdout, "cancel"), field(r.stdout, "queue"), field(r.stdout, "activity")
	out := oneLine(r.stdout + r.stderr)
	false_ := true
	switch {
	case !l.agentAlive():
		s.mark(False, "exit %d (%s), but the agent is gone", r.code, out)
	case r.code == 0 && drop && !ended:
		s.mark(False, "--drop-queue exit 0 (%s), but the record shows a turn running 5 s later", out)
	case r.code == 0 && !ended && taken && (queue != "flushed" || activity != "busy"):
		s.mark(False, "exit 0 (%s), but the record shows the turn it took the queued texts into running", out)
	case r.code == 0 && !ended && !taken && cancel == "confirmed":
		s.mark(False, "cancel=confirmed (%s), but the record shows the cancelled turn running", out)
	case r.code == 0 && cancel == "no-turn" && retrying:
		s.mark(False, "cancel=no-turn (%s), but the CLI was retrying its turn", out)
	default:
		false_ = false
		if r.code == 0 {
			s.mark(Backed, "exit 0 (%s); the record shows a turn running=%v, the queued texts taken=%v", out, !ended, taken)
		} else {
			s.mark(Honest, "exit %d: %s; the record shows a turn running=%v, the queued texts taken=%v", r.code, out, !ended, taken)
		}
	}
	if drop && r.code == 3 && !strings.Contains(r.stderr, "queue-not-dropped") && cancel != "unconfirmed" {
		s.note("--drop-queue exit 3 without the queue-not-dropped code")
	}
	s.tallyInterrupt(ended || taken, false_)
	if !ended && !taken {
		s.missed("the turn still ran 5 s after the interrupt")
	}
}

// noteNamed remembers the message ids a verb's output named: flushed,
// dropped or untaken messages were accounted for.
func (o *outage) noteNamed(r result) {
	for _, key := range []string{"flushed", "dropped", "untaken"} {
		for _, out := range []string{r.stdout, r.stderr} {
			for _, id := range strings.Split(field(out, key), ",") {
				if id != "" {
					o.named[id] = true
				}
			}
		}
	}
}

// exit stops the agent during the outage and judges it: exit 0 must leave
// no agent; a refusal that leaves one running is ineffective.
func (o *outage) exit(s *scen) {
	l := o.l
	r := l.fm("fm-control", "exit", l.addr)
	l.capture(s.name)
	o.noteNamed(r)
	if r.code == 0 {
		s.gone(r)
		return
	}
	s.mark(Honest, "exit %d: %s", r.code, oneLine(r.stdout+r.stderr))
	if poll(5*time.Second, func() bool { return !l.agentAlive() }) {
		return
	}
	s.missed("the agent still runs: %v", l.agentProcesses())
	l.killAgent() // the next step starts from a stopped agent
}

// fate judges the sends that exited 3, the agent stopped: each must be in
// the record once, or named by a verb (flushed, dropped, untaken); one
// that neither holds was typed and lost without a word.
func (o *outage) fate(s *scen) {
	l := o.l
	if len(o.pending) == 0 {
		s.mark(Backed, "no send into the outage was left unconfirmed")
		return
	}
	for _, p := range o.pending {
		exact, altered := count(l.messages(), p.text)
		switch {
		case o.letGo[p.id] && (exact > 0 || altered != ""):
			s.mark(False, "%s's exit-3 text %s: an interrupt named it untaken, let go of, yet the record holds it", p.scenario, p.id)
		case exact == 0 && altered != "" && p.queued:
			s.mark(Honest, "%s's queued text reached the record joined to others, as fm-send said it may: %s", p.scenario, clip(altered))
		case exact > 1 || altered != "":
			s.mark(False, "%s's exit-3 text: the record holds %d exact copies, altered %s", p.scenario, exact, clip(altered))

		case exact == 1:
			s.mark(Backed, "%s's exit-3 text reached the record once", p.scenario)
		case o.named[p.id]:
			s.mark(Honest, "%s's exit-3 text %s never reached the record, and a verb named it", p.scenario, p.id)
		default:
			s.mark(Honest, "%s's exit-3 text %s never reached the record", p.scenario, p.id)
			s.missed("%s's text was typed, never taken, and no verb named it", p.scenario)
		}
	}
}

// relaunch starts a new agent on the stopped task during the outage
// (fm-spawn --relaunch): its launch turn meets the refused connections. It
// judges the relaunch as relaunchFrom does, and then status and wait.
func (o *outage) relaunch(s *scen) {
	l := o.l
	prompt := harness.BriefPrompt(l.briefPath())
	msgs := l.messages()
	before, _ := count(msgs, prompt)
	r := l.fm("fm-spawn", l.addr, "--relaunch")
	l.capture(s.name)
	if r.code != 0 {
		s.mark(Honest, "exit %d: %s", r.code, oneLine(r.stderr))
		s.missed("the task was not relaunched")
		return
	}
	// A reader of every session (claude) holds one more launch prompt;
	// one of the newest holds the new session's, alone.
	took := poll(recordLag, func() bool {
		now := l.messages()
		n, _ := count(now, prompt)
		return n == before+1 || (n == 1 && len(now) == 1 && len(msgs) > 1)
	})
	agents := paneAgents(l)
	ready := field(r.stdout, "ready")
	switch {
	case len(agents) != 1:
		s.mark(False, "exit 0 (%s), but the pane runs %d agents: %v", oneLine(r.stdout), len(agents), l.agentProcesses())
	case !took && ready == "confirmed":
		s.mark(False, "ready=confirmed, but the new agent's record never took the launch prompt: %s", clipAll(l.messages()))
	case !took:
		s.mark(Honest, "exit 0 ready=%s; the new agent has not taken the launch prompt %v later", ready, recordLag)
	default:
		s.mark(Backed, "exit 0 ready=%s; one new agent whose record holds the launch prompt", ready)
	}
	if time.Until(l.stub.DownUntil()) > 5*time.Second {
		s.judgeFailing("")
	}
}

// stayedStopped judges, the API back, that the fresh agent stopped in the
// outage did not go on with its turns from anywhere: the model got no
// call for them after the exit.
func (o *outage) stayedStopped(s *scen) {
	l := o.l
	time.Sleep(3 * time.Second)
	if o.exited.IsZero() {
		s.broken("the fresh agent was never stopped")
	}
	late := 0
	for _, nonce := range o.nonces {
		for _, r := range l.stub.CallsFor(nonce) {
			if r.At.After(o.exited) {
				late++
			}
		}
	}
	if late > 0 {
		s.mark(False, "the model got %d calls for the stopped agent's turns after its exit", late)
		return
	}
	s.mark(Backed, "no call for the stopped agent's %d turns after its exit, %v after the outage", len(o.nonces), time.Since(l.stub.DownUntil()).Round(time.Second))
}

// failingTurn puts the agent in a turn whose model calls all fail as kind
// k says, judges status and wait during it, interrupts it, and judges what
// status and wait say of the turn after.
func (s *scen) failingTurn(k turnKind) {
	l := s.l
	nonce := randHex(3)
	k.start(s, nonce)
	s.judgeFailing(nonce)
	s.interrupt()
	if n := retriedAfter(l, nonce, len(l.stub.CallsFor(nonce)), k.quiet); n > 0 {
		s.survived("the CLI called the model %d more times for the turn after the interrupt", n)
	}
	s.judgeTurnAfter(nonce, time.Time{})
}

// judgeFailing judges what status and wait say of an agent whose model
// calls fail (turn nonce; "" for a launch turn): while its record shows the
// turn running, before and after both reads, the CLI retries, and
// activity=idle or wait --for idle exit 0 is false. A CLI that gave up
// ended its turn, and idle is then the truth.
func (s *scen) judgeFailing(nonce string) {
	l := s.l
	l.capture(s.name + "-failing")
	before := l.retrying()
	st := l.status()
	w := l.fm("fm-control", "wait", l.addr, "--for", "idle", "--timeout", "2s")
	running := before && !poll(1500*time.Millisecond, func() bool { return !l.retrying() })
	attempts := "the API refusing connections"
	if nonce != "" {
		attempts = fmt.Sprintf("%d attempts %v", len(l.stub.CallsFor(nonce)), outcomes(l, nonce))
	}
	switch {
	case st["activity"] == "idle" && running:
		s.mark(False, "status said activity=idle while the record shows the turn running (%s)", attempts)
	case w.code == 0 && running:
		s.mark(False, "wait --for idle exit 0 (%s) while the record shows the turn running (%s)", oneLine(w.stdout), attempts)
	case st["activity"] == "busy" && running:
		s.mark(Backed, "retrying (%s): status said activity=busy, wait --for idle exit %d", attempts, w.code)
	case !running && st["activity"] == "idle":
		s.mark(Backed, "the CLI gave the turn up (%s): the record shows no turn, status said activity=idle turn=%s", attempts, st["turn"])
	default:
		s.mark(Honest, "record running=%v (%s): status said activity=%q, wait --for idle exit %d", running, attempts, st["activity"], w.code)
	}
}

// judgeTurnAfter judges what status and wait --for done say of the newest
// turn once it is over: turn=completed, or a wait for done that exits 0,
// needs the model to have answered the turn (nonce) since since; a turn
// the model answered is not failed.
func (s *scen) judgeTurnAfter(nonce string, since time.Time) {
	l := s.l
	if !l.settle(10 * time.Second) {
		s.note("the record still shows a turn running; no outcome to judge")
		return
	}
	answered := false
	for _, r := range l.stub.CallsFor(nonce) {
		answered = answered || (r.Outcome == "reply" && r.At.After(since))
	}
	st := l.status()
	w := l.fm("fm-control", "wait", l.addr, "--for", "done", "--timeout", "3s")
	switch {
	case st["turn"] == "completed" && !answered:
		s.mark(False, "status said turn=completed, but the model never answered the turn")
	case w.code == 0 && !answered:
		s.mark(False, "wait --for done exit 0 (%s), but the model never answered the turn", oneLine(w.stdout))
	case st["turn"] == "failed" && answered:
		s.mark(False, "status said turn=failed, but the model answered the turn")
	default:
		s.mark(Backed, "after the turn status said activity=%s turn=%q, wait --for done exit %d (%s); the model answered it=%v", st["activity"], st["turn"], w.code, oneLine(w.stderr), answered)
	}
}

// queuedRunStartedSince reports whether the agent's log (a SubmitLogger:
// cline) shows a prompt it had queued sent, its run started, since at.
func (l *lab) queuedRunStartedSince(at time.Time) bool {
	logger, ok := l.reader().(records.SubmitLogger)
	if !ok {
		return false
	}
	subs, err := logger.Submissions()
	if err != nil {
		return false
	}
	queued := map[int]bool{}
	for _, sub := range subs {
		switch {
		case sub.Queued:
			queued[sub.Length] = true
		case sub.Started && queued[sub.Length] && !sub.Time.Before(at):
			return true
		}
	}
	return false
}
