package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/backends/sqlite"
	"fmctl/harness"
	"fmctl/harness/records"
	"fmctl/state"
	"fmctl/tests/agents/seed"
	"fmctl/tests/agents/stubmodel"
	"fmctl/tests/privtmux"
)

// session is the tmux session every lab's task windows live in.
const session = "fmses"

// profile is one real harness under test.
type profile struct {
	name string // the capability table's harness name
	bin  string // the CLI's executable in node_modules/.bin
	pkg  string // its npm package
	// relaunchTo is the harness a relaunch scenario moves this task onto
	// ("" = no relaunch scenario starts from this harness).
	relaunchTo string
	// slowStart: every spawn takes about 40-60 s (opencode), so the tier
	// runs it in a lane of its own.
	slowStart bool
	// remote: the remote group runs it on a host over ssh.
	remote bool
	// streamSecs is how long the turn a send is made into while it
	// streams runs (8 s when 0): cline writes a prompt to its record only
	// when its turn ends, so the send that starts the turn is judged at
	// that end, and the turn must outlast the send's record wait.
	streamSecs int
}

var profiles = []profile{
	{name: "claude", bin: "claude", pkg: "@anthropic-ai/claude-code", relaunchTo: "codex", remote: true},
	{name: "codex", bin: "codex", pkg: "@openai/codex", remote: true},
	{name: "opencode", bin: "opencode", pkg: "opencode-ai", relaunchTo: "pi", slowStart: true},
	{name: "kilo", bin: "kilo", pkg: "@kilocode/cli", relaunchTo: "opencode", slowStart: true},
	{name: "pi", bin: "pi", pkg: "@mariozechner/pi-coding-agent"},
	{name: "gemini", bin: "gemini", pkg: "@google/gemini-cli", relaunchTo: "qwen"},
	{name: "qwen", bin: "qwen", pkg: "@qwen-code/qwen-code", relaunchTo: "gemini", remote: true},
	{name: "copilot", bin: "copilot", pkg: "@github/copilot", relaunchTo: "claude", remote: true},
	{name: "cline", bin: "cline", pkg: "cline", relaunchTo: "pi", streamSecs: 35},
}

func lookupProfile(name string) profile {
	for _, p := range profiles {
		if p.name == name {
			return p
		}
	}
	panic("no profile " + name)
}

// lab is one private world for one task: a tmux server, a HOME seeded for
// the harnesses it will run, a git worktree, an FM_HOME and a model stub.
type lab struct {
	t       *testing.T
	p       profile
	version string
	group   string // the scenario group, for capture names
	dir     string
	home    string // the agents' HOME
	wt      string // the task's worktree
	fmHome  string
	sock    string
	stub    *stubmodel.Server
	env     []string // the fm binaries' environment
	capDir  string
	steps   int
	id      string
	addr    string     // how the fm binaries name the task: id, or <host>/id on a host
	current string     // the harness the task runs now
	running string     // the scenario running now, named when the group aborts
	sent    []sentText // every fm-send of a text, in order
	// logged are the sends fm-send confirmed by the agent's log alone
	// (proof=log: cline's record gets the text when the turn ends); the
	// lab judges at its close that the record got each exactly once.
	logged []loggedSend
}

// loggedSend is a send confirmed by proof=log, with its harness and the
// scenario that judged it.
type loggedSend struct{ harness, scenario, text string }

// fatalf ends the lab's group on a failure of the lab itself (a tool that
// could not run, a call that never returned), named in the ledger's closing
// lines beside the scenario it cut short.
func (l *lab) fatalf(format string, args ...any) {
	l.t.Helper()
	msg := fmt.Sprintf(format, args...)
	theLedger.abort(l.t.Name(), l.running, msg)
	l.t.Fatal(msg)
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// newLab builds a lab whose HOME is seeded for p and for every harness in
// also (a relaunch's target runs in the same pane, so its variables must be
// in that pane's shell from the start).
func newLab(t *testing.T, p profile, group string, also ...profile) *lab {
	t.Helper()
	requireAgents(t, p)
	version, err := installedVersion(p.pkg)
	if err != nil {
		t.Fatal(err)
	}
	// The pinned channel is what the capability table was verified on; the
	// latest and oldest channels run the same tier on other versions to
	// find out whether they pass.
	if h, ok := harness.Lookup(p.name); ok && h.Verified != nil && h.Verified.Version != version && agentsChannel == "pinned" {
		t.Fatalf("%s %s is installed, but the capability table says %s was verified against %s; run scripts/agents-install.sh", p.pkg, version, p.name, h.Verified.Version)
	}
	dir, err := os.MkdirTemp("", "fmagents-"+p.name+"-")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.EvalSymlinks(dir)
	l := &lab{t: t, p: p, version: version, group: group, dir: dir,
		home: filepath.Join(dir, "home"), wt: filepath.Join(dir, "wt"), fmHome: filepath.Join(dir, "fmhome"),
		sock: "fmagents-" + randHex(6), id: "t1", addr: "t1", current: p.name}
	t.Cleanup(l.close)
	t.Cleanup(func() {
		if t.Failed() {
			theLedger.abort(t.Name(), l.running, "")
		}
	})
	for _, d := range []string{l.home, l.wt, filepath.Join(dir, "tmp"), filepath.Join(l.fmHome, "state"), filepath.Join(l.fmHome, "data"), filepath.Join(l.fmHome, "config")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l.git("init", "-q")
	l.git("-c", "user.name=fmctl", "-c", "user.email=fmctl@example.invalid", "commit", "-q", "--allow-empty", "-m", "start")
	if l.stub, err = stubmodel.Start(); err != nil {
		t.Fatal(err)
	}
	l.capDir = filepath.Join(dir, "captures")
	if root := os.Getenv("FM_AGENTS_CAPTURES"); root != "" {
		l.capDir = filepath.Join(root, p.name+"-"+version)
		// A rerun replaces the group's captures whole, so no step of an
		// older run lingers under a number this run did not reach.
		os.RemoveAll(filepath.Join(l.capDir, group))
	}
	path := agentsBin + ":" + fmBin + ":" + filepath.Dir(tmuxBin) + ":/usr/local/bin:/usr/bin:/bin"
	for _, q := range append([]profile{p}, also...) {
		// A newer Node than the machine's, for a CLI that needs one
		// (qwen-code 0.24 wants Node 22): the CLIs' `env node` finds it.
		node, err := nodeFor(q.pkg)
		if err != nil {
			t.Fatal(err)
		}
		if node != "" {
			path = node + ":" + path
			break
		}
	}
	paneEnv := []string{
		"PATH=" + path,
		"HOME=" + l.home, "TERM=xterm-256color", "LANG=C.UTF-8", "HISTFILE=/dev/null", "PS1=$ ",
		// A CLI that updates itself with npm (qwen did, globally) installs
		// into the lab; outside_test.go proves nothing reached the real one.
		"NPM_CONFIG_PREFIX=" + filepath.Join(l.home, ".npm-global"),
		// gemini writes its client-error reports and Bun-built CLIs their
		// native library (13 MB a start) to the temporary folder.
		"TMPDIR=" + filepath.Join(dir, "tmp"),
	}
	for _, q := range append([]profile{p}, also...) {
		v, err := installedVersion(q.pkg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		prep, err := seed.Prepare(ctx, q.name, seed.Run{Home: l.home, Worktree: l.wt, BinDir: agentsBin, Version: v, ModelURL: l.stub.URL})
		cancel()
		if err != nil {
			t.Fatalf("seed %s: %v", q.name, err)
		}
		if prep.Cleanup != nil {
			t.Cleanup(prep.Cleanup)
		}
		paneEnv = append(paneEnv, prep.Env...)
	}
	l.startServer(paneEnv)
	// tmux gives a window it creates for a client (fm-spawn's new-window)
	// that client's environment, so the product runs with the panes' one.
	l.env = append(paneEnv, "FM_HOME="+l.fmHome, "FM_TMUX_SOCKET="+l.sock, "FM_TMUX_SESSION="+session,
		"FM_SPAWN_WAIT=60", "FM_CONTROL_LAUNCH_WAIT=60", "FM_CONTROL_EXIT_WAIT=20")
	return l
}

// startServer starts the private tmux server with exactly env: a pane
// inherits the server's environment, not the caller's.
func (l *lab) startServer(env []string) {
	l.t.Helper()
	start := exec.Command(tmuxBin, "-L", l.sock, "-f", "/dev/null", "new-session", "-d", "-s", session,
		"-x", "200", "-y", "50", "-n", "home", "--", bashBin, "--norc", "--noprofile")
	start.Env = env
	start.Dir = l.wt
	if out, err := start.CombinedOutput(); err != nil {
		l.fatalf("start tmux server: %v\n%s", err, out)
	}
	for _, opt := range [][]string{
		{"automatic-rename", "off"}, {"allow-rename", "off"}, {"default-shell", bashBin},
		{"default-command", "exec " + bashBin + " --norc --noprofile"}, {"history-limit", "5000"},
	} {
		l.tmux("set-option", "-g", opt[0], opt[1])
	}
}

// close kills this lab's server and every process left with its HOME, then
// removes the lab unless the test failed.
func (l *lab) close() {
	if len(l.logged) > 0 {
		l.scenario("logged-sends-recorded", l.judgeLogged)
	}
	privtmux.Kill(l.tmuxCmd, l.sock)
	killHomeProcesses(l.home)
	if l.stub != nil {
		l.stub.Close()
	}
	// FM_AGENTS_KEEP keeps every lab, for reading a CLI's own record of
	// a scenario that passed honestly but did not do what it was for.
	if !l.t.Failed() && os.Getenv("FM_AGENTS_KEEP") == "" {
		os.RemoveAll(l.dir)
	} else {
		l.keepRequests()
		l.t.Logf("lab kept for inspection: %s", l.dir)
	}
}

// keepRequests writes what the model stub was asked and how it answered,
// with each request's body, into the kept lab.
func (l *lab) keepRequests() {
	if l.stub == nil {
		return
	}
	dir := filepath.Join(l.dir, "stub-requests")
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	var index strings.Builder
	for i, r := range l.stub.Requests() {
		fmt.Fprintf(&index, "%03d %s %s %s %s scenario=%s outcome=%s prompt=%q\n", i, r.At.Format("15:04:05.000"), r.Method, r.Path, r.Dialect, r.Scenario, r.Outcome, r.Prompt)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d.json", i)), r.Body, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "index.txt"), []byte(index.String()), 0o644)
}

// killHomeProcesses ends the processes whose environment names this lab's
// HOME (codex's app-server daemon outlives its pane): nothing else.
func killHomeProcesses(home string) {
	want := []byte("HOME=" + home + "\x00")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && strings.Contains(string(env), string(want)) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func (l *lab) git(args ...string) {
	l.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = l.wt
	if out, err := cmd.CombinedOutput(); err != nil {
		l.fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (l *lab) tmuxCmd(args ...string) *exec.Cmd {
	return exec.Command(tmuxBin, append([]string{"-L", l.sock}, args...)...)
}

func (l *lab) tmux(args ...string) string {
	l.t.Helper()
	out, err := l.tmuxCmd(args...).CombinedOutput()
	if err != nil {
		l.fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// result is one finished run of a product binary.
type result struct {
	args    []string
	code    int
	stdout  string
	stderr  string
	elapsed time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("%s -> exit %d in %v: %s%s", strings.Join(shorten(r.args), " "), r.code,
		r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stdout), strings.TrimSpace(r.stderr))
}

func shorten(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if len(a) > 60 {
			a = fmt.Sprintf("%.40q...(%d bytes)", a, len(a))
		}
		out[i] = a
	}
	return out
}

// fm runs one product binary against this lab.
func (l *lab) fm(bin string, args ...string) result {
	l.t.Helper()
	return l.fmWith(nil, bin, args...)
}

// fmWith is fm with env added to the lab's (a tunable one call sets).
func (l *lab) fmWith(env []string, bin string, args ...string) result {
	l.t.Helper()
	bound := callBound(args)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(fmBin, bin), args...)
	cmd.Env = append(append([]string(nil), l.env...), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	watch := l.watchCall(bin, args)
	start := time.Now()
	err := cmd.Run()
	r := result{args: append([]string{bin}, args...), stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	watch.answer(start.Add(r.elapsed), r)
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		l.fatalf("%s could not run: %v", bin, err)
	}
	if ctx.Err() != nil {
		l.fatalf("%s did not finish within %v", r, bound)
	}
	l.t.Log(r)
	if bin == "fm-send" && !slices.Contains(args, "--key") && len(args) > 0 {
		l.sent = append(l.sent, sentText{text: args[len(args)-1], result: r, id: messageIDOf(r.stdout + r.stderr)})
	}
	return r
}

// callBound bounds one product call: 3 minutes, or a minute more than the
// --timeout it is given (a wait for idle past an outage a slow kilo
// pushed beyond 2 minutes asked for 3m38s and was cut at 3 minutes).
func callBound(args []string) time.Duration {
	bound := 3 * time.Minute
	if i := slices.Index(args, "--timeout"); i >= 0 && i+1 < len(args) {
		if d, err := time.ParseDuration(args[i+1]); err == nil && d+time.Minute > bound {
			bound = d + time.Minute
		}
	}
	return bound
}

// spawn launches the lab's task with its brief, and any extra flags.
func (l *lab) spawn(extra ...string) result {
	brief := filepath.Join(l.dir, "brief.md")
	if err := os.WriteFile(brief, []byte("You are driven by fmctl's real-agent tests. Reply with one word.\n"), 0o644); err != nil {
		l.fatalf("%v", err)
	}
	return l.fm("fm-spawn", append([]string{l.addr, "--harness", l.p.name, "--worktree", l.wt, "--brief", brief}, extra...)...)
}

// briefPath is where fm-spawn placed the task's brief.
func (l *lab) briefPath() string { return filepath.Join(l.fmHome, "data", l.id, "brief.md") }

// stateFile is the task's state/<id>.<suffix> as it reads now, or why not.
func (l *lab) stateFile(suffix string) string {
	data, err := os.ReadFile(filepath.Join(l.fmHome, "state", l.id+"."+suffix))
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return string(data)
}

// pane returns the task window's pane id and shell pid, or "" when the
// window is gone.
func (l *lab) pane() (id string, pid int) {
	out, err := l.tmuxCmd("list-panes", "-t", session+":fm-"+l.id, "-F", "#{pane_id} #{pane_pid}").Output()
	if err != nil {
		return "", 0
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return "", 0
	}
	pid, _ = strconv.Atoi(f[1])
	return f[0], pid
}

// agentProcesses lists the commands running under the pane's shell: the
// pane runs a bare bash, so any descendant is the agent (or what it left).
func (l *lab) agentProcesses() []string {
	names := processNames()
	var out []string
	for _, pid := range l.descendants() {
		out = append(out, names[pid])
	}
	return out
}

// processNames maps every pid to its command name.
func processNames() map[int]string {
	names := map[int]string{}
	for pid, p := range processTable() {
		names[pid] = p.name
	}
	return names
}

type proc struct {
	ppid int
	name string
}

// processTable reads every process's parent and name from /proc.
func processTable() map[int]proc {
	table := map[int]proc{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		table[pid] = proc{ppid: ppid, name: s[open+1 : close]}
	}
	return table
}

// descendants lists the pids under the pane's shell.
func (l *lab) descendants() []int {
	_, shell := l.pane()
	if shell == 0 {
		return nil
	}
	table := processTable()
	var out []int
	for pid := range table {
		for p := table[pid].ppid; p > 1; p = table[p].ppid {
			if p == shell {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

func (l *lab) agentAlive() bool { return len(l.agentProcesses()) > 0 }

// killAgent ends every process under the pane's shell (test scaffolding for
// "the agent has gone"), and waits until none is left.
func (l *lab) killAgent() {
	for _, pid := range l.descendants() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if !poll(5*time.Second, func() bool { return !l.agentAlive() }) {
		l.fatalf("the agent survived SIGKILL: %v", l.agentProcesses())
	}
}

// settleLaunch waits until the agent has taken its launch prompt and that
// first turn is over, whatever fm-spawn said about readiness, so a later
// scenario tests what it names rather than a start-up still under way.
func (l *lab) settleLaunch() {
	prompt := harness.BriefPrompt(l.briefPath())
	// opencode on a loaded 2-core machine took over two minutes from its
	// launch to its first model request; an idle one takes seconds.
	// The model must have had the launch turn's call too: opencode under
	// load records the prompt, reads no turn running, and sends its
	// request tens of seconds later.
	poll(180*time.Second, func() bool {
		n, _ := count(l.messages(), prompt)
		return n == 1 && !l.turnRunning() && l.stub.Held() == 0 && len(l.stub.CallsFor(l.briefPath())) > 0
	})
}

// screen captures the task's pane, plain and with escapes.
func (l *lab) screen(escapes bool) string {
	pane, _ := l.pane()
	if pane == "" {
		return "(no pane)"
	}
	args := []string{"capture-pane", "-p", "-t", pane}
	if escapes {
		args = append(args, "-e")
	}
	out, err := l.tmuxCmd(args...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture failed: %v: %s)", err, out)
	}
	return string(out)
}

// capture saves what the screen looks like at this step, as plain text and
// with its escape sequences, for the screen-signature fixtures.
func (l *lab) capture(step string) {
	l.steps++
	dir := filepath.Join(l.capDir, l.group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		l.fatalf("%v", err)
	}
	base := filepath.Join(dir, fmt.Sprintf("%02d-%s", l.steps, step))
	// The lab's temporary directory is replaced by a fixed name, so a
	// refreshed capture differs from the committed one only where the
	// screen does.
	for ext, escapes := range map[string]bool{".txt": false, ".ansi": true} {
		screen := strings.ReplaceAll(trimScreen(l.screen(escapes)), l.dir, "/tmp/fmagents-lab")
		if err := os.WriteFile(base+ext, []byte(screen), 0o644); err != nil {
			l.fatalf("%v", err)
		}
	}
}

// trimScreen drops the blank rows below the last drawn line.
func trimScreen(s string) string {
	return strings.TrimRight(s, "\n ") + "\n"
}

// reader is the agent's own record for the harness the task runs now.
func (l *lab) reader() records.Reader {
	r, err := l.readerFor(l.current)
	if err != nil {
		l.fatalf("%v", err)
	}
	return r
}

// readerFor is harness name's own record in this lab, for the task's agent
// launched last (its spawn_gen): a session an agent killed before it left
// unfinished is no turn running.
func (l *lab) readerFor(name string) (records.Reader, error) {
	var since time.Time
	if rec, err := state.ParseRecord([]byte(l.stateFile("meta"))); err == nil {
		since, _ = rec.SpawnedAt()
	}
	return records.For(name, records.Where{Home: l.home, Worktree: l.wt, Since: since, Query: sqlite.Query(backends.NewExecRunner(""))})
}

// messages is the user messages in the current agent's record; a record
// that cannot be read yet counts as empty.
func (l *lab) messages() []string {
	m, err := l.reader().UserMessages()
	if err != nil {
		return nil
	}
	return m
}

// composerReady reads the pane by the harness's verified signature: its
// composer drawn, with no dialog over it (a harness without one is not
// read, and passes).
func (l *lab) composerReady() bool {
	h, _ := harness.Lookup(l.current)
	sig, ok := h.Screen()
	return !ok || sig.ReadScreen(strings.Split(l.screen(false), "\n")).Ready()
}

// commands is the slash commands the agent's record keeps apart from its
// user messages (claude's), none where it keeps none.
func (l *lab) commands() []string {
	c, ok := l.reader().(records.CommandRecorder)
	if !ok {
		return nil
	}
	m, err := c.Commands()
	if err != nil {
		return nil
	}
	return m
}

func (l *lab) turnRunning() bool {
	running, err := l.reader().TurnRunning()
	return err == nil && running
}

// poll checks cond every 100 ms until it holds or d passes.
func poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settle waits until the agent's record shows no running turn and the
// model stub holds no request, so the next scenario starts from idle.
func (l *lab) settle(d time.Duration) bool {
	return poll(d, func() bool { return !l.turnRunning() && l.stub.Held() == 0 })
}

// closeDialog presses Escape while the harness's screen signature reads a
// dialog over the composer, at most three times: scaffolding between
// scenarios, never a step under test.
func (l *lab) closeDialog() {
	h, ok := harness.Lookup(l.current)
	if !ok {
		return
	}
	sig, ok := h.Screen()
	if !ok {
		return
	}
	for i := 0; i < 3; i++ {
		if sig.ReadScreen(strings.Split(l.screen(false), "\n")).Dialog == "" {
			return
		}
		l.rawKeys("Escape")
	}
}

// rawKeys types keys with tmux directly: test scaffolding that returns an
// agent to a known state between scenarios, never a step under test.
func (l *lab) rawKeys(keys ...string) {
	pane, _ := l.pane()
	if pane == "" {
		return
	}
	for _, k := range keys {
		l.tmuxCmd("send-keys", "-t", pane, k).Run()
		time.Sleep(300 * time.Millisecond)
	}
}
