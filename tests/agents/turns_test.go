package agents

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/tests/agents/stubmodel"
)

// turnsGroup drives an agent through the turns a firstmate meets all day,
// with the stub model answering as a real API does: a reply, tool calls the
// agent runs, a long streamed answer, a rate limit the CLI retries through.
// Each scenario judges fmctl's claims in that state by the agent's record.
func turnsGroup(t *testing.T, p profile) {
	l := spawnedLab(t, p, "turns")
	if l == nil {
		return
	}
	replyPrompt := "say one word " + randHex(3)
	l.scenario("reply", func(s *scen) {
		nonce := replyPrompt[len(replyPrompt)-6:]
		s.send(replyPrompt)
		if !poll(30*time.Second, func() bool { return replied(l, nonce) }) {
			s.broken("the model's reply never came: %s", outcomes(l, nonce))
		}
		if !l.settle(30 * time.Second) {
			s.broken("the record shows the turn running after the model's reply")
		}
		s.note("the model replied and the turn ended")
	})
	l.scenario("tool-calls", func(s *scen) {
		dir := l.toolDir()
		s.send("change the worktree " + stubmodel.ToolWord + " " + dir + " " + randHex(3))
		shell, write := filepath.Join(dir, stubmodel.ShellFile), filepath.Join(dir, stubmodel.WriteFile)
		if !poll(60*time.Second, func() bool { return exists(shell) && exists(write) }) {
			s.broken("the agent did not run the stub's tool calls (shell ran=%v, write ran=%v)", exists(shell), exists(write))
		}
		if !l.settle(30 * time.Second) {
			s.broken("the record shows the turn running after the tool calls")
		}
		s.note("the agent ran its shell and write tools, then the turn ended")
	})
	l.scenario("wait-busy-while-streaming", func(s *scen) {
		s.send("a stream to wait on " + stubmodel.LongWord + "15 " + randHex(3))
		r := l.fm("fm-control", "wait", l.addr, "--for", "busy", "--timeout", "20s")
		// A turn still streaming from the model is running whatever the
		// record says yet (gemini's chat file holds the answer as it
		// streams, so its record reads no turn running mid-stream).
		running := poll(3*time.Second, func() bool { return l.turnRunning() || l.stub.Held() > 0 })
		switch {
		case r.code == 0 && !running:
			s.mark(False, "wait --for busy exit 0 (%s), but neither the record nor the model shows a turn running", oneLine(r.stdout))
		case r.code == 0:
			s.mark(Backed, "wait --for busy exit 0 in %v; the record or the model shows the turn running", r.elapsed.Round(time.Millisecond))
		default:
			s.mark(Honest, "wait exit %d: %s", r.code, oneLine(r.stdout+r.stderr))
			if running {
				s.missed("the agent was busy, and wait did not say so")
			}
		}
	})
	recoverIdle(l)
	l.settle(30 * time.Second)
	l.scenario("wait-idle-after-reply", func(s *scen) {
		// A turn that streams for 3 s: wait must see it end, not miss it.
		s.send("a short stream " + stubmodel.LongWord + "3 " + randHex(3))
		r := l.fm("fm-control", "wait", l.addr, "--for", "idle", "--timeout", "30s")
		// A record written a moment after the agent's own hook (codex's
		// rollout) is not a false idle; a turn with seconds left to stream
		// is.
		s.judgeWaitIdle(r, !poll(1500*time.Millisecond, func() bool { return !l.turnRunning() }))
	})
	recoverIdle(l)
	l.scenario("interrupt-streaming", func(s *scen) {
		s.waitBusy("stream until interrupted " + stubmodel.LongWord + "60 " + randHex(3))
		s.interrupt()
	})
	recoverIdle(l)
	l.scenario("interrupt-tool-running", func(s *scen) {
		nonce := randHex(3)
		dir := l.toolDir()
		s.send("a slow tool " + stubmodel.ToolWord + "40 " + dir + " " + nonce)
		if !poll(30*time.Second, func() bool { return madeToolCall(l, nonce) }) {
			s.broken("the model's tool call never went out: %s", outcomes(l, nonce))
		}
		time.Sleep(2 * time.Second) // the CLI starts the command
		s.interrupt()
		if exists(filepath.Join(dir, stubmodel.ShellFile)) {
			s.note("the command finished before the interrupt")
		}
	})
	recoverIdle(l)
	stallScenario(l)
	l.scenario("exit-streaming", func(s *scen) {
		s.waitBusy("stream until exit " + stubmodel.LongWord + "60 " + randHex(3))
		s.exit("exit-streaming")
	})
	// The conversation as fmctl shows it from the record, the agent gone.
	l.scenario("read-record", func(s *scen) { s.judgeRecordView(replyPrompt) })
}

// backoffGroup: a send into a turn that streams, an interrupt during the
// CLI's own retry back-off after a rate limit, and a send into such a
// back-off. An agent queues what it is sent in these states and submits it
// later, so they get a lab of their own, and the send into a back-off comes
// last: a queue flushed late would steer the next scenario's turn.
func backoffGroup(t *testing.T, p profile) {
	l := spawnedLab(t, p, "backoff")
	if l == nil {
		return
	}
	secs := cmp.Or(p.streamSecs, 8)
	l.scenario("send-while-streaming", func(s *scen) {
		s.waitBusy(fmt.Sprintf("stream a long answer %s%d %s", stubmodel.LongWord, secs, randHex(3)))
		// A message the agent queues behind the streaming turn lands in
		// the record once the turn ends.
		s.sendWithin("sent while the answer streams "+randHex(3), recordLag+time.Duration(secs+2)*time.Second)
	})
	l.settle(40 * time.Second)
	l.scenario("interrupt-backoff", func(s *scen) {
		nonce := randHex(3)
		s.send("rate limited for good " + stubmodel.RateWord + "60 " + nonce)
		if !poll(30*time.Second, func() bool { return len(l.stub.CallsFor(nonce)) >= 2 }) {
			s.broken("the CLI did not retry after the rate limit: %s", outcomes(l, nonce))
		}
		s.judgeBusyInBackoff(nonce)
		s.interrupt()
		// A back-off that survived the interrupt shows as another attempt.
		after := len(l.stub.CallsFor(nonce))
		time.Sleep(6 * time.Second)
		if n := len(l.stub.CallsFor(nonce)); n > after {
			s.survived("the CLI retried %d more times after the interrupt", n-after)
		}
	})
	recoverIdle(l)
	l.settle(20 * time.Second)
	l.scenario("send-during-backoff", func(s *scen) {
		nonce := randHex(3)
		s.send("hit the rate limit " + stubmodel.RateWord + "4 " + nonce)
		if !poll(30*time.Second, func() bool { return len(l.stub.CallsFor(nonce)) >= 2 }) {
			s.broken("the CLI did not retry after the rate limit: %s", outcomes(l, nonce))
		}
		s.note("the CLI is in its retry back-off (%d attempts so far)", len(l.stub.CallsFor(nonce)))
		// A CLI that queues it (gemini) submits it only once its own
		// retries succeed, which its growing delays can put a minute off;
		// the wait for it returns as soon as the record holds it.
		r := s.sendWithin("sent during the back-off "+randHex(3), recordLag+75*time.Second)
		if r.code == 1 && strings.Contains(r.stderr, "waiting out a retry") {
			// agent-retrying: refused before typing, for a CLI that drops
			// text then (pi); --when-ready sends once the back-off is over.
			s.sendWhenReady("sent when ready after the back-off "+randHex(3), 90*time.Second, recordLag+30*time.Second)
		}
	})
	l.settle(40 * time.Second)
	recoverIdle(l)
	// Last, since it ends the agent: exit while the CLI retries. A retry
	// that outlives the exit (in a daemon) shows as another attempt.
	l.scenario("exit-during-backoff", func(s *scen) {
		nonce := randHex(3)
		s.send("rate limited until exit " + stubmodel.RateWord + "60 " + nonce)
		if !poll(30*time.Second, func() bool { return len(l.stub.CallsFor(nonce)) >= 2 }) {
			s.broken("the CLI did not retry after the rate limit: %s", outcomes(l, nonce))
		}
		s.exit("exit-during-backoff")
		if s.verdict != Backed {
			return
		}
		after := len(l.stub.CallsFor(nonce))
		time.Sleep(6 * time.Second)
		if n := len(l.stub.CallsFor(nonce)); n > after {
			s.mark(False, "exit 0, but the CLI retried %d more times after it", n-after)
		}
	})
}

// spawnedLab starts a group's lab with its task spawned (judged as the
// group's first scenario) and its launch turn over; nil when the spawn
// broke.
func spawnedLab(t *testing.T, p profile, group string) *lab {
	l := newLab(t, p, group)
	if l.scenario("spawn-for-"+group, func(s *scen) { spawned(l, s) }) == Broken {
		return nil
	}
	l.settleLaunch()
	return l
}

// toolDir is a fresh directory in the worktree for one tool scenario.
func (l *lab) toolDir() string {
	dir := filepath.Join(l.wt, "fmtool-"+randHex(3))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		l.fatalf("%v", err)
	}
	return dir
}

// replied reports whether the stub answered a prompt holding nonce in words.
func replied(l *lab, nonce string) bool { return hadOutcome(l, nonce, "reply") }

func madeToolCall(l *lab, nonce string) bool { return hadOutcome(l, nonce, "tool-call") }

// hadOutcome reports whether the stub answered a call for nonce as outcome.
func hadOutcome(l *lab, nonce, outcome string) bool {
	for _, r := range l.stub.CallsFor(nonce) {
		if r.Outcome == outcome {
			return true
		}
	}
	return false
}

// outcomes lists how the stub answered the calls for nonce, for a note.
func outcomes(l *lab, nonce string) []string {
	var out []string
	for _, r := range l.stub.CallsFor(nonce) {
		out = append(out, r.Outcome)
	}
	return out
}
