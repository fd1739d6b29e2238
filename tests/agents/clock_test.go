package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fmctl/harness"
)

// The agent's clock: beside each call of a verb the latency table measures
// (clocktable_test.go), a watch takes the moment the agent itself acted from
// its own evidence (its record, the model stub's log, /proc, its screen),
// never from what fmctl read, so fmctl's answer can be timed against it.
const (
	// procPoll: a /proc stat read costs microseconds, and fmctl's own waits
	// poll from 10 ms, so a coarser look would blur the 150 ms goal.
	procPoll = 10 * time.Millisecond
	// recordPoll and screenPoll: a record read parses the whole transcript
	// (opencode's starts sqlite3) and a screen read starts a tmux client,
	// both competing with the agent and fmctl for 2 cores; at 50 ms, a third
	// of the goal, a polled act is late by at most that much.
	recordPoll = 50 * time.Millisecond
	screenPoll = 50 * time.Millisecond
	// actWindow is how long after fmctl's answer the watch still looks for
	// the act: a message queued behind a turn reaches the record only when
	// that turn ends (the tier's busy sends wait behind 8 s streams).
	actWindow = 20 * time.Second
)

// probe is one kind of act evidence: check reports when the agent acted,
// if it has; exact evidence (the stub's timestamps) reports its own moment,
// polled evidence the moment of the look that first saw it.
type probe struct {
	evidence string
	every    time.Duration
	check    func(now time.Time) (time.Time, bool)
}

// act is one moment a watch looks for: the verb's row it times, and the
// evidence that shows it.
type act struct {
	verb   string
	probes []probe
	// scoped: the evidence is no more than "a turn ended" or "a dialog is
	// up", so after the answer it is looked for only until the lab's next
	// call, whose own doing it may be.
	scoped bool
}

// actWatch watches one call for the agent's acts.
type actWatch struct {
	harness  string
	start    time.Time
	call     int64 // the lab's count of calls, this one included
	said     string
	acts     []act
	answered chan time.Time
}

// watchCall starts the watch for a product call, or returns nil when the
// call is not a verb the table measures. It reads what the agent looked
// like before the call, so it runs before the call starts.
func (l *lab) watchCall(bin string, args []string) *actWatch {
	call := theClock.watches(l).calls.Add(1)
	verb, text, target := measuredVerb(l, bin, args)
	if verb == "" {
		return nil
	}
	w := &actWatch{harness: l.current, call: call, answered: make(chan time.Time, 1)}
	switch verb {
	case "send":
		// Busy as the agent's record or the model shows it, not the screen.
		verb = "send idle"
		if l.turnRunning() || l.stub.Held() > 0 {
			verb = "send busy"
		}
		w.acts = []act{{verb, l.tookText(text, target), false}}
	case "spawn":
		// fm-spawn's ready is read off the screen, while the launch prompt
		// rides on the command line and is taken on the agent's own time:
		// both moments are timed.
		w.acts = []act{{verb + ": composer", []probe{l.composerDrawn(target)}, false},
			{verb + ": prompt taken", l.tookText(harness.BriefPrompt(l.briefPath()), target), false}}
	case "relaunch":
		w.acts = []act{{verb + ": prompt taken", l.tookText(harness.BriefPrompt(l.briefPath()), target), false}}
	case "interrupt":
		// The first sign of the cancel, and apart the record's: fmctl's
		// proof waits for the record, which some agents write late.
		ended := l.turnEnded(target)
		w.acts = []act{{verb, []probe{l.streamAborted(), ended}, true}, {"interrupt: record", []probe{ended}, true}}
	case "wait idle":
		w.acts = []act{{verb, []probe{l.turnEnded(target)}, true}}
	case "wait waiting":
		w.acts = []act{{verb, []probe{l.dialogDrawn(target)}, true}}
	case "exit":
		// The agent's process gone, and apart its terminal given back to
		// the shell (what the pane's state is read from): children that
		// outlive the agent hold the terminal after it.
		w.acts = []act{{verb, []probe{l.processGone()}, false}, {"exit: shell in front", []probe{l.shellInFront()}, false}}
	}
	lw := theClock.watches(l)
	w.start = time.Now()
	lw.wg.Add(1)
	go func() {
		defer lw.wg.Done()
		w.run(lw)
	}()
	return w
}

// answer tells the watch when fmctl answered, and what it said.
func (w *actWatch) answer(at time.Time, r result) {
	if w != nil {
		w.said = oneLine(r.stdout + r.stderr)
		w.answered <- at
	}
}

// run polls every act's probes until each act was shown, the window after
// the answer closes, or the lab ends. An act is the earliest moment any of
// its probes has once one of them shows it (an exact stub time may precede
// a polled one).
func (w *actWatch) run(lw *labWatches) {
	samples := make([]clockSample, len(w.acts))
	done := make([]bool, len(w.acts))
	last := make([][]time.Time, len(w.acts))
	for i, a := range w.acts {
		samples[i] = clockSample{harness: w.harness, verb: a.verb, start: w.start}
		last[i] = make([]time.Time, len(a.probes))
	}
	var answer time.Time
	var deadline <-chan time.Time
	tick := time.NewTicker(procPoll)
	defer tick.Stop()
	for pending := len(w.acts); pending > 0 || answer.IsZero(); {
		select {
		case <-lw.stop:
			// The lab ended: an answered call counts, its unseen acts as
			// unseen; one never answered failed the test already.
			if answer.IsZero() {
				return
			}
			pending = 0
			continue
		case answer = <-w.answered:
			deadline = time.After(time.Until(answer.Add(actWindow)))
			continue
		case <-deadline:
			pending = 0
			continue
		case <-tick.C:
		}
		next := lw.calls.Load() > w.call && !answer.IsZero()
		for i, a := range w.acts {
			switch {
			case done[i]:
			case a.scoped && next:
				done[i] = true // what shows from here on may be the next call's
				pending--
			case w.shows(a, last[i]):
				samples[i].act, samples[i].evidence = earliest(a)
				done[i] = true
				pending--
			}
		}
	}
	for _, s := range samples {
		s.answer, s.said = answer, w.said
		theClock.add(s)
	}
}

// shows runs the act's probes due now and reports whether one shows it.
func (w *actWatch) shows(a act, last []time.Time) bool {
	for j, p := range a.probes {
		now := time.Now()
		if now.Sub(last[j]) < p.every {
			continue
		}
		last[j] = now
		if _, ok := p.check(now); ok {
			return true
		}
	}
	return false
}

// earliest is the earliest moment any of the act's probes shows.
func earliest(a act) (at time.Time, evidence string) {
	now := time.Now()
	for _, p := range a.probes {
		if t, ok := p.check(now); ok && (at.IsZero() || t.Before(at)) {
			at, evidence = t, p.evidence
		}
	}
	return at, evidence
}

// measuredVerb names the table's verb for a call, the text a send carries
// and the harness a spawn or relaunch starts; "" for a call not measured
// (a key, a slash command the model never sees, status, other waits).
func measuredVerb(l *lab, bin string, args []string) (verb, text, target string) {
	target = l.current
	for i, a := range args {
		if a == "--harness" && i+1 < len(args) {
			target = args[i+1]
		}
	}
	switch {
	case bin == "fm-spawn":
		return "spawn", "", target
	case bin == "fm-send" && len(args) > 0 && !hasArg(args, "--key"):
		if text = args[len(args)-1]; !strings.HasPrefix(text, "/") {
			return "send", text, target
		}
	case bin == "fm-control" && len(args) > 0:
		switch args[0] {
		case "interrupt", "exit", "relaunch":
			return args[0], "", target
		case "wait":
			if hasArg(args, "idle") {
				return "wait idle", "", target
			}
			if hasArg(args, "waiting") {
				return "wait waiting", "", target
			}
		}
	}
	return "", "", ""
}

func hasArg(args []string, want string) bool {
	for _, a := range args {
		if a == want {
			return true
		}
	}
	return false
}

// polled is evidence the watch looks for every so often: the act is the
// moment the first look that showed it began (late by at most every).
func polled(evidence string, every time.Duration, shows func() bool) probe {
	var at time.Time
	return probe{evidence: fmt.Sprintf("%s, polled every %v", evidence, every), every: every,
		check: func(now time.Time) (time.Time, bool) {
			if at.IsZero() && shows() {
				at = now
			}
			return at, !at.IsZero()
		}}
}

// tookText: the agent's record holds one more copy of text than before the
// call, or a model request carrying it arrived after the call began.
func (l *lab) tookText(text, name string) []probe {
	before, _ := count(l.messagesOf(name), text)
	tail := strings.TrimRight(text, " \t\n")
	if len(tail) > 40 {
		tail = tail[len(tail)-40:]
	}
	start := time.Now()
	record := polled("record", recordPoll, func() bool {
		exact, altered := count(l.messagesOf(name), text)
		return exact > before || altered != ""
	})
	request := probe{evidence: "model request", every: recordPoll,
		check: func(time.Time) (time.Time, bool) {
			for _, r := range l.stub.CallsFor(tail) {
				if !r.At.Before(start) {
					return r.At, true
				}
			}
			return time.Time{}, false
		}}
	return []probe{record, request}
}

// streamAborted: the stub saw the client close a turn's request it was
// holding open or streaming, one open at the call or begun after it.
func (l *lab) streamAborted() probe {
	start := time.Now()
	return probe{evidence: "stream aborted at the model", every: recordPoll,
		check: func(time.Time) (time.Time, bool) {
			var first time.Time
			for _, r := range l.stub.Requests() {
				aborted := r.Outcome == "held" || r.Outcome == "gone"
				if r.Dialect == "" || r.Side || !aborted || r.Done.Before(start) {
					continue
				}
				if first.IsZero() || r.Done.Before(first) {
					first = r.Done
				}
			}
			return first, !first.IsZero()
		}}
}

// turnEnded: the record shows no turn running after it showed one (at the
// call or during it): the turn's end, or its cancel, was written.
func (l *lab) turnEnded(name string) probe {
	runs := func() bool {
		r, err := l.readerFor(name)
		if err != nil {
			return false
		}
		running, err := r.TurnRunning()
		return err == nil && running
	}
	seen := runs()
	return polled("record", recordPoll, func() bool {
		if runs() {
			seen = true
			return false
		}
		return seen
	})
}

// processGone: every process the pane's shell ran as the agent has left
// /proc (a zombie counts as gone: the agent is over, its shell not yet
// told).
func (l *lab) processGone() probe {
	pids := paneAgents(l)
	return polled("/proc", procPoll, func() bool {
		for _, pid := range pids {
			if running(pid) {
				return false
			}
		}
		return len(pids) > 0
	})
}

// shellInFront: the terminal's foreground process group is the pane
// shell's own again, after it was not when the call began.
func (l *lab) shellInFront() probe {
	_, shell := l.pane()
	front := func() bool {
		f := statFields(shell)
		return len(f) > 5 && f[2] == f[5]
	}
	away := shell != 0 && !front()
	return polled("/proc", procPoll, func() bool { return away && front() })
}

// statFields is /proc/<pid>/stat's fields after the command name: state,
// ppid, pgrp, session, tty_nr, tpgid, ...
func statFields(pid int) []string {
	stat, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(stat)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

func running(pid int) bool {
	f := statFields(pid)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// composerDrawn: the harness's verified screen signature reads its
// composer ready on the test's own capture of the pane, after a capture
// that did not: a relaunch starts over the screen its stopped agent left,
// whose composer still reads ready and is not the new agent's.
func (l *lab) composerDrawn(name string) probe {
	h, _ := harness.Lookup(name)
	sig, ok := h.Screen()
	notYet := false
	return polled("screen", screenPoll, func() bool {
		ready := ok && sig.ReadScreen(strings.Split(l.screen(false), "\n")).Ready()
		notYet = notYet || !ready
		return ready && notYet
	})
}

// dialogDrawn: a permission dialog on the test's own capture of the pane.
// One already up when the call began was drawn when the lab's own look
// (dialogUp, every 100 ms while a scenario waits for it) first saw it
// after a look that did not; unknown otherwise.
func (l *lab) dialogDrawn(name string) probe {
	if drawn, known := theClock.dialogSince(l); known {
		return probe{evidence: "screen, the lab's own look every 100 ms", every: screenPoll,
			check: func(time.Time) (time.Time, bool) { return drawn, true }}
	}
	drawnSince := false
	return polled("screen", screenPoll, func() bool {
		_, up := l.dialogOn(name)
		drawnSince = drawnSince || !up
		return up && drawnSince
	})
}

// messagesOf is the user messages in harness name's record in this lab.
func (l *lab) messagesOf(name string) []string {
	r, err := l.readerFor(name)
	if err != nil {
		return nil
	}
	m, err := r.UserMessages()
	if err != nil {
		return nil
	}
	return m
}

// agentClock collects every watched call, and each lab's watches and
// dialog sightings.
type agentClock struct {
	mu      sync.Mutex
	samples []clockSample
	labs    map[*lab]*labWatches
}

type labWatches struct {
	stop  chan struct{}
	wg    sync.WaitGroup
	calls atomic.Int64 // product calls the lab made
	// dialog: the moment the lab's look first saw a dialog up after a look
	// that saw none; zero while none is up or its start was not seen.
	dialog    time.Time
	sawNoneAt bool
}

var theClock = &agentClock{labs: map[*lab]*labWatches{}}

func (c *agentClock) add(s clockSample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.samples = append(c.samples, s)
}

// watches is the lab's: its end stops them and waits for them, before the
// lab's server and stub go.
func (c *agentClock) watches(l *lab) *labWatches {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.labs[l]
	if w == nil {
		w = &labWatches{stop: make(chan struct{})}
		c.labs[l] = w
		l.t.Cleanup(func() {
			close(w.stop)
			w.wg.Wait()
		})
	}
	return w
}

// sawDialog notes one look of the lab at its screen for a dialog.
func (c *agentClock) sawDialog(l *lab, up bool) {
	w := c.watches(l)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !up:
		w.dialog, w.sawNoneAt = time.Time{}, true
	case w.dialog.IsZero() && w.sawNoneAt:
		w.dialog = time.Now()
	}
}

// dialogSince is when the dialog now up was first seen, if its drawing
// fell between two of the lab's looks.
func (c *agentClock) dialogSince(l *lab) (time.Time, bool) {
	w := c.watches(l)
	c.mu.Lock()
	defer c.mu.Unlock()
	return w.dialog, !w.dialog.IsZero()
}
