package agents

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fmctl/harness"
	"fmctl/tests/agents/seed"
	"fmctl/tests/agents/stubmodel"
)

// interruptRounds is how many times interruptsGroup goes through every turn
// kind in one agent session: with the tier's other interrupts it makes
// over 20 per harness, the sample issue 22's 99% target is judged on.
const interruptRounds = 3

// turnKind is one state of a running turn an interrupt, an exit or a
// relaunch meets: start puts the agent in it, nonce names the turn at the
// model stub.
type turnKind struct {
	name  string
	start func(s *scen, nonce string)
	// quiet is how long to watch, after the verb, for the CLI starting the
	// turn again by itself (a retry after the back-off it was in).
	quiet time.Duration
	// only names the harnesses the kind exists for (none: every one).
	only []string
}

// appliesTo reports whether k is a turn kind of harness name.
func (k turnKind) appliesTo(name string) bool {
	return len(k.only) == 0 || slices.Contains(k.only, name)
}

var turnKinds = []turnKind{
	{name: "submit", start: startRightAfterSubmit, quiet: time.Second},
	{name: "streaming", start: func(s *scen, nonce string) {
		s.waitBusy("stream until stopped " + stubmodel.LongWord + "60 " + nonce)
	}, quiet: time.Second},
	{name: "tool", start: startToolRunning, quiet: time.Second},
	{name: "backoff", start: startBackoff, quiet: 4 * time.Second},
	{name: "hang", start: func(s *scen, nonce string) {
		s.waitBusy("hold the turn open " + stubmodel.HangWord + " " + nonce)
	}, quiet: time.Second},
	// The interrupt comes while the CLI's own prompt hooks still hold the
	// prompt (the lab's slow user hook): the request must never go out,
	// which the quiet watch past the hook's end checks at the model.
	{name: "hook", start: func(s *scen, nonce string) {
		if r := s.send("a turn its hooks hold " + seed.SlowHookWord + " " + stubmodel.HangWord + " " + nonce); r.code != 0 {
			s.broken("the turn to cancel was not sent: %s", r)
		}
		if n := len(s.l.stub.CallsFor(nonce)); n > 0 {
			s.note("the model had %d call(s) for the turn before the interrupt: no hook held the prompt", n)
		}
	}, quiet: (seed.HookHoldSeconds + 2) * time.Second, only: []string{"gemini"}},
}

// failure is a failure of the model API a turn can meet besides the rate
// limit (startBackoff): the stub answers every attempt of the turn with it,
// so the CLI retries until it is stopped or gives up (the turn ends failed).
type failure struct {
	name, word string
	outcome    string // the stub's outcome for one failed attempt
}

// downFor is how long the down kind's API refuses connections: a retry can
// show at the model only once it is back, so the watch after a verb
// outlasts it.
const downFor = 10 * time.Second

var failures = []failure{
	{name: "overload", word: stubmodel.OverloadWord + "60", outcome: stubmodel.Overload.String()},
	{name: "5xx", word: stubmodel.ServerErrorWord + "60", outcome: stubmodel.ServerError.String()},
	{name: "cut", word: stubmodel.CutWord + "60", outcome: stubmodel.Cut.String()},
	{name: "down", word: fmt.Sprintf("%s%d", stubmodel.DownWord, int(downFor/time.Second)), outcome: stubmodel.Down.String()},
}

// failureKind is the turn kind of a turn whose every model call fails as f.
func failureKind(f failure) turnKind {
	quiet := 4 * time.Second
	if f.name == "down" {
		quiet = downFor + 2*time.Second
	}
	return turnKind{name: f.name, quiet: quiet, start: func(s *scen, nonce string) {
		l := s.l
		// A turn still running takes the prompt into its queue, and the
		// failing request goes out only after it (opencode, loaded). kilo
		// relaunched into the down API retried its launch turn for minutes
		// under load (CI's third C with kilo, 2026-12-07), so that turn is
		// ended by its interrupt key, as a person would.
		if !l.settle(30 * time.Second) {
			s.note("a turn still ran 30 s before the failing turn was sent; it was interrupted")
			recoverIdle(l)
		}
		s.send("a failing model " + f.word + " " + nonce)
		// opencode under load sends its request tens of seconds after it
		// recorded the prompt (once more than 60 s, in CI's even half).
		if !poll(120*time.Second, func() bool { return hadOutcome(l, nonce, f.outcome) }) {
			s.broken("the model's %s never went out: %s", f.name, outcomes(l, nonce))
		}
		time.Sleep(300 * time.Millisecond) // the CLI reads the failure and starts its wait
	}}
}

// awaitUp waits out an outage the down kind started, so the next scenario's
// turn reaches the model.
func (l *lab) awaitUp() {
	if left := time.Until(l.stub.DownUntil()); left > 0 {
		time.Sleep(left + 500*time.Millisecond)
	}
}

// startRightAfterSubmit sends a turn that hangs and returns as soon as the
// send does: the interrupt that follows comes right after the submit.
func startRightAfterSubmit(s *scen, nonce string) {
	l := s.l
	r := s.send("a turn to cancel at once " + stubmodel.HangWord + " " + nonce)
	switch r.code {
	case 0:
	case 3:
		// Taken into the queue of a turn whose end the record shows
		// before the screen does (gemini): it starts the moment that
		// turn is over, and is interrupted as soon as it runs.
		if !poll(recordLag, func() bool { return l.turnRunning() && l.stub.Held() > 0 }) {
			s.broken("the queued turn to cancel never ran: %s", r)
		}
	default:
		s.broken("the turn to cancel was not sent: %s", r)
	}
}

// startToolRunning has the model call the CLI's shell tool with a command
// that sleeps 40 s, and returns once the CLI has had a moment to start it.
func startToolRunning(s *scen, nonce string) {
	l := s.l
	dir := filepath.Join(l.wt, "fmtool-"+nonce)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		l.fatalf("%v", err)
	}
	s.send("a slow tool " + stubmodel.ToolWord + "40 " + dir + " " + nonce)
	if !poll(30*time.Second, func() bool { return madeToolCall(l, nonce) }) {
		s.broken("the model's tool call never went out: %s", outcomes(l, nonce))
	}
	if !poll(5*time.Second, func() bool { return len(toolProcesses(nonce, l)) > 0 }) {
		s.note("no tool command seen running 5 s after the tool call")
	}
}

// startBackoff has the model answer every attempt with a rate limit, and
// returns once the first attempt was refused: the CLI is in its own
// back-off, waiting to retry (the backoff group's interrupt comes after a
// retry; claude's first wait is where a confirmed cancel once left it
// retrying).
func startBackoff(s *scen, nonce string) {
	l := s.l
	s.send("rate limited for good " + stubmodel.RateWord + "60 " + nonce)
	if !poll(30*time.Second, func() bool { return hadOutcome(l, nonce, stubmodel.RateLimit.String()) }) {
		s.broken("the model's rate limit never went out: %s", outcomes(l, nonce))
	}
	time.Sleep(300 * time.Millisecond) // the CLI reads the 429 and starts its wait
}

// toolProcesses lists the processes of the slow tool command of turn nonce
// (its command line names the turn's tool directory) still running,
// wherever they were reparented.
func toolProcesses(nonce string, l *lab) []int {
	prefix := filepath.Join(l.wt, "fmtool-"+nonce)
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), prefix) || !strings.Contains(string(cmdline), "sleep") {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// retriedAfter reports whether the model stub got another call for nonce
// within quiet after it had seen calls: the CLI started the turn again by
// itself.
func retriedAfter(l *lab, nonce string, calls int, quiet time.Duration) int {
	time.Sleep(quiet)
	return len(l.stub.CallsFor(nonce)) - calls
}

// interruptsGroup interrupts one agent session many times, going through
// every turn kind interruptRounds times, so effectiveness is measured over
// a sample rather than one try per kind. Each interrupt is judged by the
// agent's own record (the turn ended) and the model stub (the CLI did not
// start the turn again by itself).
func interruptsGroup(t *testing.T, p profile) {
	l := spawnedLab(t, p, "interrupts")
	if l == nil {
		return
	}
	for round := 1; round <= interruptRounds; round++ {
		// One failure of the model API a round, in turn: every harness
		// meets overload, 5xx and cut without a round for each.
		kinds := append(slices.Clip(turnKinds), failureKind(failures[(round-1)%len(failures)]))
		for _, k := range kinds {
			if !k.appliesTo(p.name) {
				continue
			}
			l.scenario(fmt.Sprintf("interrupt-%s-%d", k.name, round), func(s *scen) {
				nonce := randHex(3)
				k.start(s, nonce)
				s.interrupt()
				if pids := toolProcesses(nonce, l); len(pids) > 0 {
					s.note("the tool command still runs after the interrupt (pids %v)", pids)
				}
				if n := retriedAfter(l, nonce, len(l.stub.CallsFor(nonce)), k.quiet); n > 0 {
					s.survived("the CLI called the model %d more times for the turn after the interrupt", n)
				} else if l.turnRunning() {
					// An ended turn stays ended: a record that shows it
					// again (a prompt gemini records only when its hooks
					// return) is read as a turn going on.
					s.survived("the record shows the turn running again %v after the interrupt", k.quiet)
				}
			})
			recoverIdle(l)
		}
	}
}

// relaunchKindsGroup relaunches one task onto the same harness from each
// turn kind, then exits it while a tool runs: every time the old agent must
// be gone with no turn of it left running, and (relaunch) one new agent
// ready in the pane, its record holding the launch prompt.
func relaunchKindsGroup(t *testing.T, p profile) {
	l := spawnedLab(t, p, "relaunch-kinds")
	if l == nil {
		return
	}
	// An outage (down) on every harness, and one more failure of the API,
	// a different one from harness to harness.
	kinds := append([]turnKind{{name: "idle", start: func(*scen, string) {}}}, turnKinds[1:4]...)
	kinds = append(kinds, failureKind(failures[3]), failureKind(failures[profileIndex(p)%3]))
	for _, k := range kinds {
		launches := len(l.stub.CallsFor(l.briefPath()))
		if l.scenario("relaunch-"+k.name, func(s *scen) { s.relaunchFrom(k) }) == Broken {
			// No relaunch ran: the kind's turn, if any, is ended by hand.
			if !l.agentAlive() {
				return
			}
			recoverIdle(l)
			continue
		}
		if !l.agentAlive() {
			// A refused relaunch (judged above) left a shell: the next
			// kind needs an agent, or the group ends here rather than
			// break every kind after it.
			if r := l.fm("fm-spawn", l.addr, "--relaunch"); r.code != 0 || !l.agentAlive() {
				return
			}
			l.settleLaunch()
			continue
		}
		// Not settleLaunch: claude's record holds every session's launch
		// prompt. The new agent's launch turn is over once the model had
		// its call and the record shows no turn.
		// A CLI that gave up its launch turn in an outage sends no more
		// call for it once the API is back.
		poll(180*time.Second, func() bool {
			gaveUp := k.name == "down" && time.Since(l.stub.DownUntil()) > 20*time.Second
			return (len(l.stub.CallsFor(l.briefPath())) > launches || gaveUp) && l.settle(0)
		})
		// opencode relaunched into an outage once stopped in its own start
		// (its log's "init" never went on) and never drew its composer;
		// the relaunch said ready=starting, and every later kind would
		// meet an agent that cannot take a message. The next kind gets a
		// new agent instead; fm-control exit types nothing into a screen
		// with no composer, so the stuck agent is killed, as a person
		// would end it.
		if !poll(60*time.Second, l.composerReady) {
			l.t.Logf("after relaunch-%s no composer was drawn in 60 s; the agent is killed and launched again:\n%s", k.name, trimScreen(l.screen(false)))
			l.killAgent()
			if r := l.fm("fm-spawn", l.addr, "--relaunch"); r.code != 0 || !l.agentAlive() {
				return
			}
			l.settleLaunch()
		}
	}
	l.scenario("exit-tool-running", func(s *scen) {
		nonce := randHex(3)
		startToolRunning(s, nonce)
		s.exit("exit-tool-running")
		s.leftNothing(nonce, turnKinds[2])
	})
}

// relaunchFrom puts the agent in kind k and relaunches it.
func (s *scen) relaunchFrom(k turnKind) {
	l := s.l
	nonce := randHex(3)
	k.start(s, nonce)
	old := l.descendants()
	launches := len(l.stub.CallsFor(l.briefPath()))
	prompt := harness.BriefPrompt(l.briefPath())
	before, _ := count(l.messages(), prompt)
	r := l.fm("fm-control", "relaunch", l.addr, "--note", "carry on "+randHex(3))
	l.capture("relaunched-from-" + k.name)
	if r.code != 0 {
		// The whole refusal and the pane as it was left: a relaunch that
		// stopped the agent and launched none is what a user must mend.
		l.t.Logf("relaunch from %s refused:\n%s\npane:\n%s", k.name, r.stderr, trimScreen(l.screen(false)))
		s.mark(Honest, "exit %d: %s", r.code, oneLine(r.stderr))
		s.missed("the task was not relaunched")
		return
	}
	// A daemon fmctl says the old agent left running by design (cline's
	// hub, left=hub:<pid>) is no part of the agent it claims stopped.
	old = slices.DeleteFunc(old, func(pid int) bool { return slices.Contains(leftPids(r.stdout), pid) })
	if !poll(5*time.Second, func() bool { return !anyAlive(old) }) {
		s.mark(False, "exit 0 (%s), but the old agent's processes %v still run", oneLine(r.stdout), alive(old))
		return
	}
	s.leftNothing(nonce, k)
	// Some readers read every session of the worktree (claude, opencode):
	// the new agent's prompt is one more copy. Others read the newest,
	// which held the old agent's copy too: there the new one shows as one
	// more request at the model, which opencode under load sends tens of
	// seconds after it recorded the prompt.
	took := poll(recordLag, func() bool {
		n, _ := count(l.messages(), prompt)
		return n == before+1 || (n == 1 && len(l.stub.CallsFor(l.briefPath())) > launches)
	})
	agents := paneAgents(l)
	switch {
	case len(agents) != 1:
		s.mark(False, "exit 0 (%s), but the pane runs %d agents: %v", oneLine(r.stdout), len(agents), l.agentProcesses())
	case took && field(r.stdout, "ready") == "blocked":
		// The lab answers every launch dialog before it.
		s.mark(False, "ready=blocked, but the new agent took its launch prompt: no dialog held it")
	case !took && field(r.stdout, "ready") == "confirmed":
		s.mark(False, "ready=confirmed, but the new agent's record never took the launch prompt: %s", clipAll(l.messages()))
	case !took:
		s.mark(Honest, "exit 0 ready=%s; the new agent has not taken the launch prompt %v later", field(r.stdout, "ready"), recordLag)
	default:
		s.mark(Backed, "exit 0 ready=%s; old agent gone, one new agent whose record holds the launch prompt", field(r.stdout, "ready"))
	}
}

// leftNothing checks that no part of the old agent's turn nonce (of kind
// k) lives on after the agent was stopped: no request held open at the
// model, no retry, no tool command still running.
func (s *scen) leftNothing(nonce string, k turnKind) {
	l := s.l
	// A request still being answered (held, streaming) has no outcome yet.
	held := func() bool {
		for _, r := range l.stub.CallsFor(nonce) {
			if r.Outcome == "" {
				return true
			}
		}
		return false
	}
	if !poll(5*time.Second, func() bool { return !held() && len(toolProcesses(nonce, l)) == 0 }) {
		s.mark(False, "the old agent's turn lives on: held at the model=%v, tool processes %v", held(), toolProcesses(nonce, l))
		return
	}
	if n := retriedAfter(l, nonce, len(l.stub.CallsFor(nonce)), k.quiet); n > 0 {
		s.mark(False, "the old agent's turn lives on: the model got %d more calls for it", n)
	}
}

// paneAgents lists the processes whose parent is the pane's shell: one
// agent per task.
func paneAgents(l *lab) []int {
	_, shell := l.pane()
	var out []int
	for pid, p := range processTable() {
		if p.ppid == shell && shell != 0 {
			out = append(out, pid)
		}
	}
	return out
}

func alive(pids []int) []int {
	table := processTable()
	var out []int
	for _, pid := range pids {
		if _, ok := table[pid]; ok {
			out = append(out, pid)
		}
	}
	return out
}

func anyAlive(pids []int) bool { return len(alive(pids)) > 0 }

// leftPids are the pids of an outcome's left=<name>:<pid>,... fact.
func leftPids(stdout string) []int {
	var pids []int
	for _, l := range strings.Split(field(stdout, "left"), ",") {
		if _, pid, ok := strings.Cut(l, ":"); ok {
			if n, err := strconv.Atoi(pid); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// interruptTally counts, per harness, every interrupt the tier judged.
type interruptTally struct {
	mu   sync.Mutex
	rows []*interruptResult
}

// interruptResult is one judged interrupt.
type interruptResult struct {
	harness, scenario string
	outcome           string // effective, ineffective or false
}

var theTally = &interruptTally{}

func (t *interruptTally) add(harness, scenario, outcome string) *interruptResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &interruptResult{harness: harness, scenario: scenario, outcome: outcome}
	t.rows = append(t.rows, r)
	return r
}

// survived records that the scenario's last interrupt did not end its turn
// for good (the CLI went on with it), found after the interrupt's own
// verdict.
func (s *scen) survived(format string, args ...any) {
	s.missed(format, args...)
	theTally.mu.Lock()
	defer theTally.mu.Unlock()
	if s.lastInterrupt != nil && s.lastInterrupt.outcome == "effective" {
		s.lastInterrupt.outcome = "ineffective"
	}
}

// interruptCounts is one harness's line of the tally.
type interruptCounts struct {
	harness                           string
	n, effective, ineffective, false_ int
}

func (c interruptCounts) percent() float64 { return 100 * float64(c.effective) / float64(c.n) }

// perHarness counts the tally per harness, in the order first seen.
func (t *interruptTally) perHarness() []*interruptCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	per := map[string]*interruptCounts{}
	var out []*interruptCounts
	for _, r := range t.rows {
		c := per[r.harness]
		if c == nil {
			c = &interruptCounts{harness: r.harness}
			per[r.harness] = c
			out = append(out, c)
		}
		c.n++
		switch r.outcome {
		case "effective":
			c.effective++
		case "ineffective":
			c.ineffective++
		default:
			c.false_++
		}
	}
	return out
}

// print writes one line per harness: interrupts, effective, ineffective,
// false, and the share that was effective; then every interrupt that was
// not.
func (t *interruptTally) print(w io.Writer) {
	per := t.perHarness()
	if len(per) == 0 {
		return
	}
	fmt.Fprintf(w, "real-agent tier: interrupts %-9s %10s %9s %11s %5s %10s\n", "harness", "interrupts", "effective", "ineffective", "false", "effective%")
	for _, c := range per {
		fmt.Fprintf(w, "real-agent tier: interrupts %-9s %10d %9d %11d %5d %9.1f%%\n", c.harness, c.n, c.effective, c.ineffective, c.false_, c.percent())
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.rows {
		if r.outcome != "effective" {
			fmt.Fprintf(w, "real-agent tier: interrupt %s %s/%s\n", r.outcome, r.harness, r.scenario)
		}
	}
}

// tallyInterrupt counts the scenario's interrupt: false when fmctl's claim
// was, else effective when the record shows the turn ended.
func (s *scen) tallyInterrupt(ended, false_ bool) {
	outcome := "ineffective"
	switch {
	case false_:
		outcome = "false"
	case ended:
		outcome = "effective"
	}
	s.lastInterrupt = theTally.add(s.l.p.name, s.name, outcome)
}

// markdown renders the tally for a report file.
func (t *interruptTally) markdown() string {
	per := t.perHarness()
	if len(per) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n| harness | interrupts | effective | ineffective | false | effective % |\n|---|---|---|---|---|---|\n")
	for _, c := range per {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.1f%% |\n", c.harness, c.n, c.effective, c.ineffective, c.false_, c.percent())
	}
	return b.String()
}
