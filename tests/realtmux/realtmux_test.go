// Package realtmux holds fmctl's real-tmux end-to-end tests. Each test starts a
// private tmux server (tmux -L fmtest-<random>), runs the fake agent
// (tests/fakeagent, built under a harness's name) under bash in a window named
// fm-<id>, runs the real fm-send / fm-control / fm-spawn binaries against it,
// and asserts on the exact bytes the agent read from its terminal.
//
// Nothing here talks to the user's tmux server: every tmux call (ours and the
// product's) names the private socket, and TMUX is emptied.
package realtmux

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmctl/tests/privtmux"
	"fmctl/tests/testbin"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// session is the tmux session every test's task windows live in.
const session = "fmses"

// agentNames are the harness names the fake agent is built under: the
// process name is what fmctl's classifier sees.
var agentNames = []string{"claude", "opencode", "grok", "muse", "codex"}

var (
	tmuxBin string // absolute path of tmux, "" when it is not installed
	bashBin string // absolute path of bash
	binDir  string // fm-send, fm-control, fm-spawn, fm-teardown and the fake agents
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	var err error
	if tmuxBin, err = exec.LookPath("tmux"); err != nil {
		tmuxBin = ""
		return m.Run() // every test skips with the reason
	}
	if bashBin, err = exec.LookPath("bash"); err != nil {
		fmt.Fprintln(os.Stderr, "realtmux: tmux is installed but bash is not:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "fmctl-realtmux-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := buildAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, "realtmux: build:", err)
		return 1
	}
	binDir = dir
	return m.Run()
}

// buildAll builds the four binaries and the fake agent (once, then copied
// under every harness name) into dir.
func buildAll(dir string) error {
	// A fault build: the killed-spawn test crashes fm-spawn at a seam.
	if err := testbin.Build(testbin.Dir(dir), []string{"fmfault"}, "./cmd/fm-send", "./cmd/fm-control", "./cmd/fm-spawn", "./cmd/fm-teardown"); err != nil {
		return err
	}
	first := filepath.Join(dir, agentNames[0])
	if err := testbin.Build(first, nil, "./tests/fakeagent"); err != nil {
		return err
	}
	for _, name := range agentNames[1:] {
		if err := copyFile(first, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o755)
}

// baseEnv is the test process's environment without anything that could
// point a tool at another tmux server or change fmctl's or the agent's
// behaviour behind the test's back, and without HOME, which newServer
// gives each server its own.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "TMUX="), strings.HasPrefix(kv, "TMUX_PANE="),
			strings.HasPrefix(kv, "FM_"), strings.HasPrefix(kv, "FAKEAGENT_"),
			strings.HasPrefix(kv, "HISTFILE="), strings.HasPrefix(kv, "PS1="), strings.HasPrefix(kv, "HOME="):
			continue
		}
		env = append(env, kv)
	}
	return env
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// waitFor polls cond every 10ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool, describe func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; state:\n%s", timeout, what, describe())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// --- the private tmux server ---------------------------------------------------

type server struct {
	t    *testing.T
	sock string // the -L socket name
	home string // FM_HOME
	dir  string // scratch directory of this test
	env  []string
}

// newServer starts a private tmux server with a session "fmses" (its first
// window, "home", is a bare bash that keeps the session alive), and an
// FM_HOME with state/, data/ and config/. serverEnv is added to the server's
// global environment, which every pane inherits.
func newServer(t *testing.T, serverEnv ...string) *server {
	t.Helper()
	requireTmux(t)
	dir := t.TempDir()
	s := &server{t: t, sock: privateSocket(t), home: filepath.Join(dir, "home"), dir: dir}
	for _, d := range []string{"state", "data", "config"} {
		if err := os.MkdirAll(filepath.Join(s.home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The panes' bash must not write a history file into the user's home or
	// read the user's rc files; PS1 keeps the prompt plain.
	// HOME: the fake agent writes its CLI's record (~/.claude/projects/...)
	// under HOME, and fm-send reads it back from the agent's environment;
	// a private one keeps it out of the user's.
	s.env = append(baseEnv(), "HISTFILE=/dev/null", "PS1=$ ", "TMUX=", "HOME="+filepath.Join(dir, "agenthome"))
	s.start(serverEnv...)
	t.Cleanup(func() { privtmux.Kill(s.cmd, s.sock) })
	return s
}

// start starts the private server with its home window, as newServer and a
// test that restarts the server do.
func (s *server) start(serverEnv ...string) {
	s.t.Helper()
	start := s.cmd("-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "200", "-y", "50",
		"-n", "home", "--", bashBin, "--norc", "--noprofile")
	start.Env = append(append([]string(nil), s.env...), serverEnv...)
	if out, err := start.CombinedOutput(); err != nil {
		s.t.Fatalf("start tmux server: %v\n%s", err, out)
	}
	// Window names are the task endpoints: nothing may rename them. Windows
	// tmux creates by itself (fm-spawn's) run a bare bash too.
	s.tmux("set-option", "-g", "automatic-rename", "off")
	s.tmux("set-option", "-g", "allow-rename", "off")
	s.tmux("set-option", "-g", "default-shell", bashBin)
	s.tmux("set-option", "-g", "default-command", "exec "+shellQuote(bashBin)+" --norc --noprofile")
}

// privateSocket names a tmux socket (-L) no other test or user shares.
func privateSocket(t *testing.T) string {
	t.Helper()
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	return "fmtest-" + hex.EncodeToString(rnd[:])
}

// requireTmux skips a test on a machine without tmux.
func requireTmux(t *testing.T) {
	t.Helper()
	if tmuxBin == "" {
		t.Skip("tmux is not installed: the real-tmux end-to-end tests need it (CI installs tmux, so they run there)")
	}
}

func (s *server) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(tmuxBin, append([]string{"-L", s.sock}, args...)...)
	cmd.Env = s.env
	return cmd
}

// tmux runs a tmux command on the private server and fails the test if it fails.
func (s *server) tmux(args ...string) string {
	s.t.Helper()
	out, err := s.cmd(args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// format reads one tmux format for a target.
func (s *server) format(target, f string) string {
	s.t.Helper()
	return strings.TrimRight(s.tmux("display-message", "-p", "-t", target, f), "\n")
}

func (s *server) capture(target string) string {
	out, err := s.cmd("capture-pane", "-p", "-t", target).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane failed: %v: %s)", err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

// reportTurnEnd records, as the agent's wiring would, that task id's
// current incarnation ended its turn.
func (s *server) reportTurnEnd(id string) {
	s.t.Helper()
	meta := readFile(filepath.Join(s.home, "state", id+".meta"))
	for _, line := range strings.Split(meta, "\n") {
		if gen, ok := strings.CutPrefix(line, "spawn_gen="); ok {
			key := readFile(filepath.Join(s.home, "state", id+".event-key"))
			wantCode(s.t, s.run("", []string{"FM_EVENT_KEY=" + key}, "fm-control", "agent-event", id, "turn-finished", "--gen", gen), 0, "fm-control agent-event")
			return
		}
	}
	s.t.Fatalf("task %s's record has no spawn_gen:\n%s", id, meta)
}

func (s *server) panes() string {
	out, _ := s.cmd("list-panes", "-a", "-F",
		"#{session_name}:#{window_name} #{pane_id} pid=#{pane_pid} cmd=#{pane_current_command} path=#{pane_current_path} dead=#{pane_dead}").CombinedOutput()
	return string(out)
}

// result is one finished run of a product binary.
type result struct {
	code    int
	stdout  string
	stderr  string
	elapsed time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %v\nstdout: %q\nstderr: %q", r.code, r.elapsed.Round(time.Millisecond), r.stdout, r.stderr)
}

// run runs one of the built binaries against this server and home. stdin is
// its standard input; extraEnv adds or overrides variables.
func (s *server) run(stdin string, extraEnv []string, bin string, args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, bin), args...)
	cmd.Env = append(append(append([]string(nil), s.env...),
		"FM_HOME="+s.home, "FM_TMUX_SOCKET="+s.sock, "TMUX="), extraEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		s.t.Fatalf("%s %s could not run: %v", bin, strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		s.t.Fatalf("%s %s did not finish within 90s", bin, strings.Join(args, " "))
	}
	return r
}

// traceFile is a fresh FM_RUNNER_TRACE path.
func (s *server) traceFile(name string) string {
	return filepath.Join(s.dir, name+".trace")
}

// traceCounts reads an FM_RUNNER_TRACE file (one `micros\tprogram\targv`
// line per runner call) and returns the tmux calls and all calls.
func traceCounts(t *testing.T, path string) (tmux, all int, lines []string) {
	t.Helper()
	lines = splitLines(readFile(path))
	for _, l := range lines {
		f := strings.SplitN(l, "\t", 3)
		if len(f) < 2 {
			t.Fatalf("trace line %q is not micros<TAB>program<TAB>argv", l)
		}
		if filepath.Base(f[1]) == "tmux" {
			tmux++
		}
	}
	return tmux, len(lines), lines
}

// --- a task with a fake agent --------------------------------------------------

type agent struct {
	s       *server
	id      string
	harness string
	kind    string
	window  string // session:fm-<id>, the recorded endpoint
	pane    string // %N
	wt      string // the worktree (the pane's cwd)
	log     string // FAKEAGENT_LOG: raw bytes
	events  string // FAKEAGENT_EVENTS
	muse    string // FAKEAGENT_MUSE_LOG, when emulating muse's session log
}

type agentOpt func(*agentSetup)

type agentSetup struct {
	kind      string
	env       []string
	museLog   bool
	labelOnly bool
}

func kind(k string) agentOpt         { return func(a *agentSetup) { a.kind = k } }
func agentEnv(kv ...string) agentOpt { return func(a *agentSetup) { a.env = append(a.env, kv...) } }
func withMuseSessionLog() agentOpt   { return func(a *agentSetup) { a.museLog = true } }

// oldRecord writes the record as it was before the id keys existed: the
// window label alone.
func oldRecord() agentOpt { return func(a *agentSetup) { a.labelOnly = true } }

// startAgent creates window fm-<id> running an interactive bash in a fresh
// worktree, types the fake agent's command line into it (so the agent is the
// shell's foreground job, and the pane returns to bash when it exits), waits
// until the agent is up and has drawn its screen, and writes the task record.
func (s *server) startAgent(id, harnessName string, opts ...agentOpt) *agent {
	s.t.Helper()
	cfg := agentSetup{kind: "ship"}
	for _, o := range opts {
		o(&cfg)
	}
	dir := filepath.Join(s.dir, "task-"+id)
	a := &agent{
		s: s, id: id, harness: harnessName, kind: cfg.kind,
		window: session + ":fm-" + id,
		wt:     filepath.Join(dir, "wt"),
		log:    filepath.Join(dir, "bytes.log"),
		events: filepath.Join(dir, "events.log"),
	}
	if err := os.MkdirAll(a.wt, 0o755); err != nil {
		s.t.Fatal(err)
	}
	// The agent's launch environment holds its incarnation's event key, as
	// fm-spawn's launch line puts it there; the key file is the state's.
	key := "rt-event-key-" + id
	s.writeState(id+".event-key", key)
	env := []string{"FAKEAGENT_LOG=" + a.log, "FAKEAGENT_EVENTS=" + a.events, "FM_EVENT_KEY=" + key}
	if cfg.museLog {
		a.muse = filepath.Join(dir, "muse-session.jsonl")
		env = append(env, "FAKEAGENT_MUSE_LOG="+a.muse)
		// fm-control finds the muse session log through this file's first line.
		s.writeState(id+".muse-session", a.muse+"\n")
	}
	env = append(env, cfg.env...)

	created := strings.Fields(s.tmux("new-window", "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}", "-t", "="+session+":",
		"-n", "fm-"+id, "-c", a.wt, "--", bashBin, "--norc", "--noprofile"))
	if len(created) != 3 {
		s.t.Fatalf("new-window printed %q, not a pane id, window id and pid", created)
	}
	a.pane = created[0]
	var line []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		line = append(line, k+"="+shellQuote(v))
	}
	line = append(line, shellQuote(filepath.Join(binDir, harnessName)))
	s.tmux("send-keys", "-t", a.pane, "-l", "--", strings.Join(line, " ")+"; echo agent-rc=$?")
	s.tmux("send-keys", "-t", a.pane, "Enter")

	waitFor(s.t, 15*time.Second, harnessName+" start event", func() bool {
		ev := a.eventLines()
		return len(ev) > 0 && strings.HasPrefix(ev[0], "start "+harnessName+" pid=")
	}, a.state)
	// The screen is drawn after raw mode and bracketed paste are switched on,
	// so once tmux shows it, the agent is ready for input.
	waitFor(s.t, 15*time.Second, harnessName+" screen", func() bool {
		return strings.HasPrefix(s.capture(a.pane), harnessName+" fake agent")
	}, a.state)
	waitFor(s.t, 15*time.Second, "pane_current_command "+harnessName, func() bool {
		return s.format(a.pane, "#{pane_current_command}") == harnessName
	}, a.state)

	// The record names the pane as fm-spawn writes it: its ids and pid.
	ids := []string{"tmux_pane_id=" + created[0], "tmux_window_id=" + created[1], "tmux_pane_pid=" + created[2]}
	if cfg.labelOnly {
		ids = nil
	}
	s.writeState(id+".meta", strings.Join(append(append([]string{"window=" + a.window}, ids...),
		"endpoint_task_id="+id,
		"worktree="+a.wt,
		"project="+a.wt,
		"harness="+harnessName,
		"kind="+cfg.kind,
		"model=default",
		"effort=default",
		"spawn_gen=rt1"), "\n")+"\n")
	return a
}

func (s *server) writeState(name, content string) {
	s.t.Helper()
	if err := os.WriteFile(filepath.Join(s.home, "state", name), []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (a *agent) bytes() string        { return readFile(a.log) }
func (a *agent) eventLines() []string { return splitLines(readFile(a.events)) }
func (a *agent) command() string      { return a.s.format(a.pane, "#{pane_current_command}") }

// eventsAfterStart are the agent's events after its start line.
func (a *agent) eventsAfterStart() []string {
	ev := a.eventLines()
	if len(ev) > 0 && strings.HasPrefix(ev[0], "start ") {
		return ev[1:]
	}
	return ev
}

func (a *agent) eventsWithPrefix(prefix string) []string {
	var out []string
	for _, e := range a.eventLines() {
		if strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}

func (a *agent) state() string {
	return fmt.Sprintf("events: %q\nbytes: %q\npanes:\n%sscreen of %s:\n%s",
		a.eventLines(), a.bytes(), a.s.panes(), a.pane, a.s.capture(a.pane))
}

// quiet waits until the agent's byte log and events have not changed for
// 200ms, so an assertion of "exactly these bytes" also catches a late extra
// Enter or key.
func (a *agent) quiet() {
	a.s.t.Helper()
	last := a.bytes() + "\x00" + readFile(a.events)
	since := time.Now()
	waitFor(a.s.t, 10*time.Second, "the agent's input to settle", func() bool {
		cur := a.bytes() + "\x00" + readFile(a.events)
		if cur != last {
			last, since = cur, time.Now()
			return false
		}
		return time.Since(since) >= 200*time.Millisecond
	}, a.state)
}

// assertBytes checks the agent read exactly want from its terminal.
func (a *agent) assertBytes(want string) {
	a.s.t.Helper()
	a.quiet()
	if got := a.bytes(); got != want {
		a.s.t.Fatalf("agent %s read %q,\nwant exactly %q\n%s", a.harness, got, want, a.state())
	}
}

func (a *agent) assertEvents(want ...string) {
	a.s.t.Helper()
	if got := a.eventsAfterStart(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		a.s.t.Fatalf("agent events after start = %q,\nwant %q\n%s", got, want, a.state())
	}
}

// submitted returns the texts of the agent's submit events, unquoted.
func (a *agent) submitted() []string {
	a.s.t.Helper()
	var out []string
	for _, e := range a.eventsWithPrefix("submit ") {
		s, err := strconv.Unquote(strings.TrimPrefix(e, "submit "))
		if err != nil {
			a.s.t.Fatalf("submit event %q: %v", e, err)
		}
		out = append(out, s)
	}
	return out
}

func wantCode(t *testing.T, r result, code int, what string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: want exit %d, got:\n%s", what, code, r)
	}
}

// --- fm-send ---------------------------------------------------------------------

func TestSendTypesTextOnceThenOneEnter(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	trace := s.traceFile("send")
	r := s.run("", []string{"FM_RUNNER_TRACE=" + trace}, "fm-send", "t1", "hello world")
	wantCode(t, r, 0, "fm-send t1 \"hello world\"")
	if !strings.HasPrefix(r.stdout, "sent t1 ") || !strings.Contains(r.stdout, " submit=confirmed") {
		t.Fatalf("stdout = %q, want `sent t1 ... submit=confirmed`", r.stdout)
	}
	tmuxCalls, all, _ := traceCounts(t, trace)
	t.Logf("fm-send t1 \"hello world\": %d tmux calls, %d runner calls, %v wall; %s",
		tmuxCalls, all, r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stdout))
	a.assertBytes("hello world\r")
	a.assertEvents(`submit "hello world"`)
}

func TestSendMultiLineStdinArrivesAsOneBracketedPaste(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	r := s.run("line one\nline two", nil, "fm-send", "t1", "-")
	wantCode(t, r, 0, "fm-send t1 - <<< 'line one\\nline two'")
	if !strings.Contains(r.stdout, "submit=confirmed") {
		t.Fatalf("stdout = %q, want submit=confirmed", r.stdout)
	}
	a.assertBytes("\x1b[200~line one\rline two\x1b[201~\r")
	a.assertEvents(`paste "line one\nline two"`, `submit "line one\nline two"`)
}

// fourKilobytes is 4096 bytes of varied printable ASCII on one line.
func fourKilobytes() string {
	var b strings.Builder
	for i := 0; b.Len() < 4096; i++ {
		fmt.Fprintf(&b, "[%04d] The quick brown fox (%d) jumps over \"the\" lazy dog's back: a+b=c, 50%% off; <tag> {k: v} | ~ ^ # @ ! ? ", i, i*7919%1000)
	}
	s := b.String()[:4095]
	return s + "Z" // never end on a blank, which a composer would not show
}

func TestSendFourKilobyteMessageArrivesWhole(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	msg := fourKilobytes()
	if len(msg) != 4096 || strings.ContainsAny(msg, "\n\r\t") {
		t.Fatalf("bad fixture: %d bytes", len(msg))
	}
	r := s.run("", nil, "fm-send", "t1", msg)
	wantCode(t, r, 0, "fm-send t1 <4096 bytes>")
	t.Logf("fm-send of 4096 bytes: %v, %s", r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stdout))
	a.quiet()
	got := a.submitted()
	if len(got) != 1 {
		t.Fatalf("want exactly one submit, got %d\n%s", len(got), a.state())
	}
	if got[0] != msg {
		t.Fatalf("submitted text (%d bytes) differs from the 4096-byte message; first difference at byte %d\n got: %q\nwant: %q",
			len(got[0]), firstDiff(got[0], msg), got[0], msg)
	}
	if n := len(a.eventsWithPrefix("paste ")); n != 1 {
		t.Fatalf("want the message as one paste, got %d paste events", n)
	}
	a.assertBytes("\x1b[200~" + msg + "\x1b[201~\r")
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) < len(b) {
		return len(a)
	}
	return len(b)
}

func TestSendMarksSecondmateOnly(t *testing.T) {
	t.Parallel()
	t.Run("secondmate", func(t *testing.T) {
		t.Parallel()
		s := newServer(t)
		a := s.startAgent("t1", "claude", kind("secondmate"))
		r := s.run("", nil, "fm-send", "t1", "status please")
		wantCode(t, r, 0, "fm-send to a secondmate")
		if !strings.Contains(r.stdout, "marked=true") {
			t.Fatalf("stdout = %q, want marked=true", r.stdout)
		}
		const mark = "[fm-from-firstmate]\xe2\x81\xa3"
		a.quiet()
		if got := a.bytes(); !strings.HasPrefix(got, mark) {
			t.Fatalf("secondmate read %q, want it to start with the marker %q", got, mark)
		}
		a.assertBytes(mark + "status please\r")
		if got := a.submitted(); len(got) != 1 || got[0] != "[fm-from-firstmate]\u2063status please" {
			t.Fatalf("submitted %q", got)
		}
	})
	t.Run("ship", func(t *testing.T) {
		t.Parallel()
		s := newServer(t)
		a := s.startAgent("t1", "claude", kind("ship"))
		r := s.run("", nil, "fm-send", "t1", "status please")
		wantCode(t, r, 0, "fm-send to a ship")
		a.assertBytes("status please\r")
		if strings.Contains(a.bytes(), "fm-from-firstmate") {
			t.Fatal("a ship got the secondmate marker")
		}
	})
}

func TestSendShellAndTmuxMetacharactersArriveLiterally(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	texts := []string{
		`run "make test"; then 'git push' && echo $(whoami) ` + "`id -u`" + ` $HOME ${PATH} \n 100% #{pane_id} ~ > out.txt | tee;`,
		`ends with a semicolon;`,
		`ends with backslash-semicolon \;`,
		`;`,
		`--key Escape -l C-c Enter`,
		`"quoted"`,
		`it's a 'test' with \\backslashes\\ and "mixed" quotes`,
	}
	want := ""
	for i, text := range texts {
		args := []string{"t1", text}
		if strings.HasPrefix(text, "-") {
			// a word that looks like a flag is text only after "--"
			args = []string{"t1", "--", text}
		}
		r := s.run("", nil, "fm-send", args...)
		wantCode(t, r, 0, fmt.Sprintf("fm-send #%d %q", i, text))
		want += text + "\r"
		a.assertBytes(want)
	}
	if got := a.submitted(); strings.Join(got, "\x00") != strings.Join(texts, "\x00") {
		t.Fatalf("submitted %q,\nwant %q", got, texts)
	}
}

func TestSendKeyEscapeIsOneEscByteInOneTmuxCall(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	trace := s.traceFile("key")
	r := s.run("", []string{"FM_RUNNER_TRACE=" + trace}, "fm-send", "t1", "--key", "Escape")
	wantCode(t, r, 0, "fm-send t1 --key Escape")
	if !strings.HasPrefix(r.stdout, "key-delivered t1 key=Escape ") {
		t.Fatalf("stdout = %q, want `key-delivered t1 key=Escape ...`", r.stdout)
	}
	a.assertBytes("\x1b")
	a.assertEvents("interrupt escape")
	tmuxCalls, all, lines := traceCounts(t, trace)
	t.Logf("fm-send t1 --key Escape: %d tmux calls, %d runner calls, %v wall\n%s",
		tmuxCalls, all, r.elapsed.Round(time.Millisecond), strings.Join(lines, "\n"))
	if tmuxCalls != 1 {
		t.Fatalf("fm-send --key Escape made %d tmux calls, want 1 (the gate and the key in one):\n%s", tmuxCalls, strings.Join(lines, "\n"))
	}
}

// TestSendWaitsForSlowComposer: an agent that keeps the submitted text in its
// composer for a while is still confirmed when it clears within the budget,
// and honestly reported unconfirmed (exit 3) when it does not; either way the
// text is typed once and only Enter is retried.
func TestSendWaitsForSlowComposer(t *testing.T) {
	t.Parallel()
	t.Run("clears-within-default-budget", func(t *testing.T) {
		t.Parallel()
		s := newServer(t)
		a := s.startAgent("t1", "claude", agentEnv("FAKEAGENT_CLEAR_DELAY=300ms"))
		r := s.run("", nil, "fm-send", "t1", "slow composer")
		wantCode(t, r, 0, "fm-send to a composer that clears after 300ms (FM_SEND_SLEEP default 0.4s)")
		t.Logf("300ms composer: %v, %s", r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stdout))
		a.assertBytes("slow composer\r")
	})
	t.Run("unconfirmed-past-budget", func(t *testing.T) {
		t.Parallel()
		s := newServer(t)
		a := s.startAgent("t1", "claude", agentEnv("FAKEAGENT_CLEAR_DELAY=1s"))
		r := s.run("", []string{"FM_SEND_RETRIES=1", "FM_SEND_SLEEP=0.1"}, "fm-send", "t1", "slow composer")
		wantCode(t, r, 3, "fm-send to a composer that clears after 1s with FM_SEND_RETRIES=1 FM_SEND_SLEEP=0.1")
		if !strings.Contains(r.stderr, "still sits in the composer after 2 Enter") {
			t.Fatalf("stderr = %q, want it to say the text still sits in the composer", r.stderr)
		}
		// Typed once; Enter pressed once plus one retry.
		a.assertBytes("slow composer\r\r")
	})
}

// --- fm-control ------------------------------------------------------------------

func TestInterruptSendsEachHarnessVerifiedKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		harness string
		opts    []agentOpt
		bytes   string
		events  []string
		out     string // the outcome; "" for exit 3, where nothing proved the cancel
	}{
		{"claude", "claude", nil, "\x1b", []string{"interrupt escape"},
			"interrupt-delivered t1 harness=claude backend=tmux verified=agent-alive cancel=no-turn proof=record"},
		{"opencode", "opencode", nil, "\x1b\x1b", []string{"interrupt escape", "interrupt escape"},
			"interrupt-delivered t1 harness=opencode backend=tmux verified=agent-alive cancel=no-turn proof=record"},
		{"grok", "grok", nil, "\x03", []string{"interrupt ctrl-c"}, ""},
		{"muse-with-session-log", "muse", []agentOpt{withMuseSessionLog()}, "\x1b\x15", []string{"interrupt escape", "clear"},
			"interrupt-delivered t1 harness=muse backend=tmux verified=agent-alive cancel=confirmed proof=ack"},
		{"muse-without-session-log", "muse", nil, "\x1b\x15", []string{"interrupt escape", "clear"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			a := s.startAgent("t1", c.harness, c.opts...)
			trace := s.traceFile("interrupt")
			r := s.run("", []string{"FM_RUNNER_TRACE=" + trace}, "fm-control", "interrupt", "t1")
			code := 0
			if c.out == "" {
				code = 3
			}
			wantCode(t, r, code, "fm-control interrupt t1 ("+c.harness+")")
			if got := strings.TrimRight(r.stdout, "\n"); got != c.out {
				t.Fatalf("stdout = %q,\nwant   %q", got, c.out)
			}
			a.assertBytes(c.bytes) // exact: no printable text was typed
			a.assertEvents(c.events...)
			if a.command() != c.harness {
				t.Fatalf("the agent is not running after its interrupt:\n%s", a.state())
			}
			tmuxCalls, all, lines := traceCounts(t, trace)
			t.Logf("fm-control interrupt t1 (%s): %d tmux calls, %d runner calls, %v wall\n%s",
				c.harness, tmuxCalls, all, r.elapsed.Round(time.Millisecond), strings.Join(lines, "\n"))
			// claude puts a cancelled prompt back, so with no telemetry
			// proving it idle its composer is read too: in the same call,
			// right before the key.
			if c.harness == "claude" && tmuxCalls != 1 {
				t.Fatalf("claude interrupt made %d tmux calls, want 1 (the gate, the screen read for a restored prompt, the key and the read proving the agent survived, in one):\n%s", tmuxCalls, strings.Join(lines, "\n"))
			}
		})
	}
}

// An interrupt finds the agent's own record through the agent's process
// (its HOME, not the caller's), and while the record still shows the turn
// after the first Escape it sends Escape again, once: the turn ended.
func TestInterruptRepeatsWhileTheAgentsRecordShowsTheTurn(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	turns := t.TempDir()
	if err := os.WriteFile(filepath.Join(turns, "turn-hangs"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := s.startAgent("t1", "claude", agentEnv("FAKEAGENT_TURNS="+turns))
	r := s.run("", nil, "fm-send", "t1", "a turn that takes two Escapes")
	wantCode(t, r, 0, "fm-send t1")
	r = s.run("", []string{"HOME=" + t.TempDir()}, "fm-control", "interrupt", "t1", "--json")
	wantCode(t, r, 0, "fm-control interrupt t1, from another HOME")
	if !strings.Contains(r.stdout, `"cancel":"confirmed","proof":"record"`) || !strings.Contains(r.stdout, `"rounds":2`) {
		t.Fatalf("stdout = %q, want cancel confirmed by the record after 2 rounds", r.stdout)
	}
	if got := a.eventsWithPrefix("interrupt "); len(got) != 2 {
		t.Fatalf("the agent got %d interrupts, want 2:\n%s", len(got), a.state())
	}
}

func TestExitTypesExitCommandAndProvesAgentStopped(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, harness, kind, bytes string
	}{
		{"claude-ship", "claude", "ship", "/exit\r"},
		{"claude-secondmate-unmarked", "claude", "secondmate", "/exit\r"},
		{"codex-ship", "codex", "ship", "/quit\r"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			a := s.startAgent("t1", c.harness, kind(c.kind))
			if c.harness == "codex" {
				// Stand in for codex's Stop hook: without the agent's word
				// that its turn ended, exit cannot prove /quit leaves none.
				s.reportTurnEnd("t1")
			}
			r := s.run("", nil, "fm-control", "exit", "t1")
			wantCode(t, r, 0, "fm-control exit t1")
			want := fmt.Sprintf("stopped t1 harness=%s backend=tmux endpoint=%s worktree=%s", c.harness, a.window, a.wt)
			if !strings.HasPrefix(r.stdout, "stopped t1 harness="+c.harness) || strings.TrimRight(r.stdout, "\n") != want {
				t.Fatalf("stdout = %q,\nwant   %q", r.stdout, want)
			}
			t.Logf("fm-control exit t1 (%s %s): %v", c.harness, c.kind, r.elapsed.Round(time.Millisecond))
			a.assertBytes(c.bytes) // exact: no routing marker, even for a secondmate
			a.assertEvents(fmt.Sprintf("submit %q", strings.TrimSuffix(c.bytes, "\r")), "exit")
			if cmd := a.command(); cmd != "bash" {
				t.Fatalf("pane_current_command after exit = %q, want bash\n%s", cmd, a.state())
			}
		})
	}
}

func TestExitUnconfirmedWhenAgentIgnoresExitCommand(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude", agentEnv("FAKEAGENT_IGNORE_EXIT=1"))
	r := s.run("", []string{"FM_CONTROL_EXIT_WAIT=1"}, "fm-control", "exit", "t1")
	wantCode(t, r, 1, "fm-control exit t1 on an agent that ignores /exit")
	const want = "exit-delivered t1 interrupt=not-needed exit-command=delivered agent-state=alive exit=unconfirmed"
	if !strings.Contains(r.stderr, want) {
		t.Fatalf("stderr = %q,\nwant it to contain %q", r.stderr, want)
	}
	if strings.Contains(r.stdout, "stopped") {
		t.Fatalf("stdout claims a stop: %q", r.stdout)
	}
	a.assertBytes("/exit\r")
	a.assertEvents(`submit "/exit"`)
	if cmd := a.command(); cmd != "claude" {
		t.Fatalf("pane_current_command = %q, want the agent still running", cmd)
	}
}

// --- fm-spawn --------------------------------------------------------------------

func TestSpawnLaunchesHarnessInWorktreeAndRecordsIt(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	dir := t.TempDir()
	events, byteLog := filepath.Join(dir, "events.log"), filepath.Join(dir, "bytes.log")
	path := fakeClaudePath(t, dir)
	s := newServer(t, path)
	s.tmux("set-environment", "-g", "FAKEAGENT_EVENTS", events)
	s.tmux("set-environment", "-g", "FAKEAGENT_LOG", byteLog)
	wt := filepath.Join(dir, "wt")
	if out, err := exec.Command("git", "init", "-q", wt).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	brief := filepath.Join(dir, "brief.txt")
	if err := os.WriteFile(brief, []byte("# Task t9\nDo the thing.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := s.run("", []string{"FM_TMUX_SESSION=" + session, path}, "fm-spawn", "t9", "--harness", "claude", "--worktree", wt, "--brief", brief)
	wantCode(t, r, 0, "fm-spawn t9 --harness claude")
	t.Logf("fm-spawn: %v, %s", r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stdout))
	out := strings.TrimRight(r.stdout, "\n")
	if !strings.HasPrefix(out, "spawned t9 harness=claude kind=ship backend=tmux window=fmses:fm-t9 ") ||
		!strings.HasSuffix(out, " ready=confirmed") || !strings.Contains(out, " worktree="+wt+" ") {
		t.Fatalf("stdout = %q, want `spawned t9 harness=claude kind=ship backend=tmux window=fmses:fm-t9 worktree=%s ready=confirmed`", out, wt)
	}

	meta := map[string]string{}
	for _, l := range splitLines(readFile(filepath.Join(s.home, "state", "t9.meta"))) {
		k, v, _ := strings.Cut(l, "=")
		meta[k] = v
	}
	for k, v := range map[string]string{"window": "fmses:fm-t9", "endpoint_task_id": "t9", "harness": "claude", "kind": "ship", "worktree": wt} {
		if meta[k] != v {
			t.Fatalf("state/t9.meta %s=%q, want %q (record: %q)", k, meta[k], v, meta)
		}
	}
	if got := readFile(filepath.Join(s.home, "data", "t9", "brief.md")); got != "# Task t9\nDo the thing.\n" {
		t.Fatalf("data/t9/brief.md = %q", got)
	}

	var names []string
	for _, n := range splitLines(s.tmux("list-windows", "-t", "="+session, "-F", "#{window_name}")) {
		if n == "fm-t9" {
			names = append(names, n)
		}
	}
	if len(names) != 1 {
		t.Fatalf("want exactly one window fm-t9, windows:\n%s", s.panes())
	}
	target := "=" + session + ":=fm-t9"
	describe := func() string {
		return fmt.Sprintf("events: %q\nbytes: %q\npanes:\n%sscreen:\n%s", splitLines(readFile(events)), readFile(byteLog), s.panes(), s.capture(target))
	}
	if cmd := s.format(target, "#{pane_current_command}"); cmd != "claude" {
		t.Fatalf("fm-t9's pane runs %q, want claude\n%s", cmd, describe())
	}
	if p := s.format(target, "#{pane_current_path}"); realPath(p) != realPath(wt) {
		t.Fatalf("fm-t9's pane_current_path = %q, want the worktree %q", p, wt)
	}
	// ready=confirmed means the agent's process is in the pane's
	// foreground; the fake writes its start event a moment after exec.
	waitFor(t, 10*time.Second, "the spawned agent's start event", func() bool { return len(splitLines(readFile(events))) > 0 }, describe)
	ev := splitLines(readFile(events))
	if !strings.HasPrefix(ev[0], "start claude pid=") {
		t.Fatalf("the spawned agent's first event is not its start:\n%s", describe())
	}
	pid := strings.TrimPrefix(ev[0], "start claude pid=")
	if runtime.GOOS != "linux" {
		return // the cwd and argv checks below read /proc
	}
	cwd, err := os.Readlink("/proc/" + pid + "/cwd")
	if err != nil {
		t.Fatalf("read the agent's cwd: %v\n%s", err, describe())
	}
	if realPath(cwd) != realPath(wt) {
		t.Fatalf("the agent started in %q, want its worktree %q", cwd, wt)
	}
	argv := strings.Split(strings.TrimRight(readFile("/proc/"+pid+"/cmdline"), "\x00"), "\x00")
	wantPrompt := "Read the brief at " + filepath.Join(s.home, "data", "t9", "brief.md") + " and follow it exactly."
	if len(argv) < 2 || argv[len(argv)-1] != wantPrompt {
		t.Fatalf("the agent's argv = %q, want its last argument %q", argv, wantPrompt)
	}
	// The brief rides the command line; nothing was typed into the agent.
	if got := readFile(byteLog); got != "" {
		t.Fatalf("the spawned agent read %q from its terminal, want nothing", got)
	}

	// The record fm-spawn published is one fm-send can use.
	r = s.run("", nil, "fm-send", "t9", "hello t9")
	wantCode(t, r, 0, "fm-send t9 after spawn")
	waitFor(t, 10*time.Second, "the spawned agent's byte log", func() bool { return readFile(byteLog) == "hello t9\r" }, describe)
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
