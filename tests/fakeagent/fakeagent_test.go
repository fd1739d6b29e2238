package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmctl/tests/privtmux"
	"fmctl/tests/testbin"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// --- parser unit tests (no tmux) --------------------------------------------

type eventSink struct {
	t    *testing.T
	path string
}

func newTestAgent(t *testing.T) (*agent, *eventSink) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	a := &agent{name: "grok", events: f, quit: func() { t.Fatal("unexpected quit") }}
	return a, &eventSink{t, path}
}

func (s *eventSink) lines() []string {
	b, err := os.ReadFile(s.path)
	if err != nil {
		s.t.Fatal(err)
	}
	return splitLines(string(b))
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestParsePasteSplitAcrossReads(t *testing.T) {
	a, ev := newTestAgent(t)
	in := "ab\x1b[200~line1\r\nline2\rline3 é\x1b[201~c"
	// Feed one byte at a time: every split point, including inside both
	// markers and inside the UTF-8 rune, must give the same result.
	for i := 0; i < len(in); i++ {
		if a.feed([]byte{in[i]}) {
			if in[i] != 0x1b {
				t.Fatalf("lone ESC reported after byte %d", i)
			}
		}
	}
	if got, want := string(a.composer), "abline1\nline2\nline3 éc"; got != want {
		t.Fatalf("composer = %q, want %q", got, want)
	}
	want := []string{`paste "line1\nline2\nline3 é"`}
	if got := ev.lines(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events = %q, want %q", got, want)
	}
}

func TestParseKeys(t *testing.T) {
	a, ev := newTestAgent(t)
	a.feed([]byte("héllo\x7f\x7fp"))
	if got := string(a.composer); got != "hélp" {
		t.Fatalf("composer after backspace = %q", got)
	}
	a.feed([]byte("\x1b[A\x1bOP\x1b[1;5C")) // cursor/function keys: ignored
	a.feed([]byte("\x15"))
	a.feed([]byte("x\x03"))
	if lonely := a.feed([]byte{0x1b}); !lonely {
		t.Fatal("lone ESC not reported")
	}
	a.escapeTimeout()
	a.feed([]byte("\x1b\x1b")) // two Escapes in one read
	a.escapeTimeout()
	a.feed([]byte("\rsecond\r"))
	want := []string{
		"clear",
		"interrupt ctrl-c",
		"interrupt escape",
		"interrupt escape",
		"interrupt escape",
		`submit "x"`,
		`submit "second"`,
	}
	if got := ev.lines(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events =\n%q\nwant\n%q", got, want)
	}
	scr := a.screen(0)
	wantScr := "\x1b[H\x1b[2Jgrok fake agent\r\nyou: x\r\nyou: second\r\n> \x1b[4;3H"
	if scr != wantScr {
		t.Fatalf("screen = %q, want %q", scr, wantScr)
	}
}

// --- tmux integration -------------------------------------------------------

var agentBin string // built once per test binary, named "grok"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakeagent-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentBin = filepath.Join(dir, "grok")
	err = testbin.Build(agentBin, nil, "./tests/fakeagent")
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "building fake agent:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

type tmuxServer struct {
	t    *testing.T
	sock string
}

// startTmux starts a private tmux server running argv in session "t".
func startTmux(t *testing.T, argv ...string) *tmuxServer {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not found on PATH; skipping tmux integration test")
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	s := &tmuxServer{t: t, sock: "fakeagent-test-" + hex.EncodeToString(rnd[:])}
	args := append([]string{"-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "--"}, argv...)
	if out, err := s.cmd(args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { privtmux.Kill(s.cmd, s.sock) })
	// Keep the pane around if the program exits, so a test failure can still
	// capture it and so the server outlives a quitting agent.
	s.run("set-option", "-g", "remain-on-exit", "on")
	return s
}

func (s *tmuxServer) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command("tmux", append([]string{"-L", s.sock}, args...)...)
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	return cmd
}

func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := s.cmd(args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (s *tmuxServer) capture() []string {
	s.t.Helper()
	return strings.Split(strings.TrimRight(s.run("capture-pane", "-p", "-t", "t"), "\n"), "\n")
}

func (s *tmuxServer) format(f string) string {
	s.t.Helper()
	return strings.TrimSpace(s.run("display-message", "-p", "-t", "t", f))
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool, describe func() string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; state:\n%s", what, describe())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type agentRun struct {
	*tmuxServer
	log, events string
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func (r *agentRun) eventLines() []string { return splitLines(readFile(r.events)) }

func (r *agentRun) hasEvent(e string) bool {
	for _, l := range r.eventLines() {
		if l == e {
			return true
		}
	}
	return false
}

func (r *agentRun) state() string {
	panes, _ := r.cmd("list-panes", "-a", "-F",
		"pid=#{pane_pid} dead=#{pane_dead} status=#{pane_dead_status} cmd=#{pane_current_command} cursor=#{cursor_x},#{cursor_y}").CombinedOutput()
	return fmt.Sprintf("events: %q\nbytes: %q\npanes: %sscreen:\n%s",
		r.eventLines(), readFile(r.log), panes, strings.Join(r.capture(), "\n"))
}

func (r *agentRun) waitEvent(e string) {
	r.t.Helper()
	waitFor(r.t, "event "+e, func() bool { return r.hasEvent(e) }, r.state)
}

func (r *agentRun) waitBytes(want string) {
	r.t.Helper()
	waitFor(r.t, fmt.Sprintf("byte log %q", want), func() bool { return readFile(r.log) == want }, r.state)
}

func (r *agentRun) waitScreenLine(line string) {
	r.t.Helper()
	waitFor(r.t, fmt.Sprintf("screen line %q", line), func() bool {
		for _, l := range r.capture() {
			if strings.TrimRight(l, " ") == line {
				return true
			}
		}
		return false
	}, r.state)
}

// waitReady waits until the agent has started and tmux has processed its
// first screen (and so its bracketed-paste switch, written before it).
func (r *agentRun) waitReady() {
	r.t.Helper()
	waitFor(r.t, "start event", func() bool {
		l := r.eventLines()
		return len(l) > 0 && strings.HasPrefix(l[0], "start grok pid=")
	}, r.state)
	r.waitScreenLine("grok fake agent")
}

// startAgent runs the fake agent as the pane's command.
func startAgent(t *testing.T, extraEnv ...string) *agentRun {
	t.Helper()
	return startAgentWith(t, "", extraEnv...)
}

// startAgentWith runs the fake agent in the pane; if rcFile is set, under
// `sh -c` so its exit status is written to rcFile.
//
// The status is not read from #{pane_dead_status}: Debian's tmux 3.3a calls
// libutempter when a pane's pty closes, which sets SIGCHLD to SIG_DFL while
// it forks and waits for its helper. A pane process exiting in that window
// loses its SIGCHLD, so tmux never reaps it: #{pane_dead} becomes 1 but
// #{pane_dead_status} stays empty (and the process stays a zombie).
func startAgentWith(t *testing.T, rcFile string, extraEnv ...string) *agentRun {
	t.Helper()
	dir := t.TempDir()
	r := &agentRun{
		log:    filepath.Join(dir, "bytes.log"),
		events: filepath.Join(dir, "events.log"),
	}
	argv := []string{"env", "FAKEAGENT_LOG=" + r.log, "FAKEAGENT_EVENTS=" + r.events}
	argv = append(argv, extraEnv...)
	argv = append(argv, agentBin)
	if rcFile != "" {
		argv = append([]string{"sh", "-c", `"$@"; echo $? > "$RCFILE"`, "sh"}, argv...)
		argv = append([]string{"env", "RCFILE=" + rcFile}, argv...)
	}
	r.tmuxServer = startTmux(t, argv...)
	r.waitReady()
	return r
}

// waitRC waits for the exit status a startAgentWith wrapper writes.
func (r *agentRun) waitRC(rcFile string) string {
	r.t.Helper()
	waitFor(r.t, "exit status file", func() bool { return strings.HasSuffix(readFile(rcFile), "\n") }, r.state)
	return strings.TrimSpace(readFile(rcFile))
}

func TestTmuxTypeAndSubmit(t *testing.T) {
	r := startAgent(t)
	r.run("send-keys", "-t", "t", "-l", "--", "hello world")
	r.run("send-keys", "-t", "t", "Enter")
	r.waitEvent(`submit "hello world"`)
	r.waitBytes("hello world\r")
	r.waitScreenLine("you: hello world")
	r.waitScreenLine(">")
}

func TestTmuxBracketedPaste(t *testing.T) {
	r := startAgent(t)
	load := r.cmd("load-buffer", "-")
	load.Stdin = strings.NewReader("line1\nline2")
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("load-buffer: %v\n%s", err, out)
	}
	r.run("paste-buffer", "-p", "-d", "-t", "t")
	r.waitEvent(`paste "line1\nline2"`)
	r.waitBytes("\x1b[200~line1\rline2\x1b[201~")
	r.waitScreenLine("> line1⏎line2")
	n := 0
	for _, l := range r.eventLines() {
		if strings.HasPrefix(l, "paste ") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("got %d paste events, want 1: %q", n, r.eventLines())
	}
	r.run("send-keys", "-t", "t", "Enter")
	r.waitEvent(`submit "line1\nline2"`)
	r.waitScreenLine("you: line1⏎line2")
}

func TestTmuxInterruptAndClearKeys(t *testing.T) {
	r := startAgent(t)
	r.run("send-keys", "-t", "t", "Escape")
	r.waitEvent("interrupt escape")
	r.waitBytes("\x1b")

	r.run("send-keys", "-t", "t", "C-c")
	r.waitEvent("interrupt ctrl-c")
	r.waitBytes("\x1b\x03")

	r.run("send-keys", "-t", "t", "-l", "--", "abc")
	r.waitScreenLine("> abc")
	r.run("send-keys", "-t", "t", "C-u")
	r.waitEvent("clear")
	r.waitBytes("\x1b\x03abc\x15")
	r.waitScreenLine(">")

	want := []string{"interrupt escape", "interrupt ctrl-c", "clear"}
	if got := r.eventLines()[1:]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events after start = %q, want %q", got, want)
	}
}

func TestTmuxCursorOnComposer(t *testing.T) {
	r := startAgent(t)
	r.run("send-keys", "-t", "t", "-l", "--", "first")
	r.run("send-keys", "-t", "t", "Enter")
	r.waitEvent(`submit "first"`)
	r.run("send-keys", "-t", "t", "-l", "--", "typed")
	r.waitScreenLine("> typed")
	y, err := strconv.Atoi(r.format("#{cursor_y}"))
	if err != nil {
		t.Fatal(err)
	}
	lines := r.capture()
	if y < 0 || y >= len(lines) || strings.TrimRight(lines[y], " ") != "> typed" {
		t.Fatalf("cursor_y=%d, screen:\n%s", y, strings.Join(lines, "\n"))
	}
	if x := r.format("#{cursor_x}"); x != strconv.Itoa(len("> typed")) {
		t.Fatalf("cursor_x=%s, want %d", x, len("> typed"))
	}
}

func TestTmuxClearDelay(t *testing.T) {
	r := startAgent(t, "FAKEAGENT_CLEAR_DELAY=400ms")
	r.run("send-keys", "-t", "t", "-l", "--", "slow")
	r.waitScreenLine("> slow")
	start := time.Now() // before Enter: the agent's clock can only start later
	r.run("send-keys", "-t", "t", "Enter")
	r.waitEvent(`submit "slow"`)
	r.waitScreenLine("you: slow")
	if !contains(r.capture(), "> slow") && time.Since(start) < 300*time.Millisecond {
		t.Fatalf("composer cleared before the delay:\n%s", r.state())
	}
	r.waitScreenLine(">")
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Fatalf("composer cleared after %v, want >= 400ms", d)
	}
}

func contains(lines []string, line string) bool {
	for _, l := range lines {
		if strings.TrimRight(l, " ") == line {
			return true
		}
	}
	return false
}

func TestTmuxInterruptExitsAndMuseLog(t *testing.T) {
	dir := t.TempDir()
	muse := filepath.Join(dir, "muse.jsonl")
	rc := filepath.Join(dir, "rc")
	r := startAgentWith(t, rc, "FAKEAGENT_INTERRUPT_EXITS=1", "FAKEAGENT_MUSE_LOG="+muse)
	if got := readFile(muse); got != `{"type":"run_started","run_id":"run-1"}`+"\n" {
		t.Fatalf("muse log at start = %q", got)
	}
	r.run("send-keys", "-t", "t", "Escape")
	r.waitEvent("exit")
	if st := r.waitRC(rc); st != "0" {
		t.Fatalf("exit status %s, want 0", st)
	}
	want := `{"type":"run_started","run_id":"run-1"}` + "\n" +
		`{"type":"run_finished","run_id":"run-1","terminal":"cancelled"}` + "\n"
	if got := readFile(muse); got != want {
		t.Fatalf("muse log = %q, want %q", got, want)
	}
	wantEv := []string{"interrupt escape", "exit"}
	if got := r.eventLines()[1:]; strings.Join(got, "|") != strings.Join(wantEv, "|") {
		t.Fatalf("events after start = %q, want %q", got, wantEv)
	}
}

func TestTmuxCtrlCExits(t *testing.T) {
	rc := filepath.Join(t.TempDir(), "rc")
	r := startAgentWith(t, rc, "FAKEAGENT_INTERRUPT_EXITS=1")
	r.run("send-keys", "-t", "t", "C-c")
	r.waitEvent("exit")
	if st := r.waitRC(rc); st != "0" {
		t.Fatalf("exit status %s, want 0", st)
	}
	wantEv := []string{"interrupt ctrl-c", "exit"}
	if got := r.eventLines()[1:]; strings.Join(got, "|") != strings.Join(wantEv, "|") {
		t.Fatalf("events after start = %q, want %q", got, wantEv)
	}
	if got := readFile(r.log); got != "\x03" {
		t.Fatalf("byte log = %q", got)
	}
}

func TestTmuxIgnoreExit(t *testing.T) {
	r := startAgent(t, "FAKEAGENT_IGNORE_EXIT=1")
	r.run("send-keys", "-t", "t", "-l", "--", "/exit")
	r.run("send-keys", "-t", "t", "Enter")
	r.waitEvent(`submit "/exit"`)
	r.waitScreenLine("you: /exit")
	if r.hasEvent("exit") || r.format("#{pane_dead}") == "1" {
		t.Fatalf("agent exited despite FAKEAGENT_IGNORE_EXIT=1:\n%s", r.state())
	}
}

func TestTmuxSignalExit(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			rc := filepath.Join(t.TempDir(), "rc")
			r := startAgentWith(t, rc)
			pid, err := strconv.Atoi(strings.TrimPrefix(r.eventLines()[0], "start grok pid="))
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatal(err)
			}
			r.waitEvent("exit")
			if st := r.waitRC(rc); st != "0" {
				t.Fatalf("exit status %s, want 0", st)
			}
		})
	}
}

func TestTmuxExitUnderBash(t *testing.T) {
	dir := t.TempDir()
	r := &agentRun{log: filepath.Join(dir, "bytes.log"), events: filepath.Join(dir, "events.log")}
	r.tmuxServer = startTmux(t, "env", "PS1=$ ", "bash", "--norc", "--noprofile")
	waitFor(t, "bash", func() bool { return r.format("#{pane_current_command}") == "bash" }, r.state)
	cmdline := fmt.Sprintf("env FAKEAGENT_LOG=%s FAKEAGENT_EVENTS=%s %s; echo agent-rc=$?", r.log, r.events, agentBin)
	r.run("send-keys", "-t", "t", "-l", "--", cmdline)
	r.run("send-keys", "-t", "t", "Enter")
	waitFor(t, "pane_current_command grok", func() bool { return r.format("#{pane_current_command}") == "grok" }, r.state)
	r.waitReady()
	r.run("send-keys", "-t", "t", "-l", "--", "/exit")
	r.run("send-keys", "-t", "t", "Enter")
	r.waitEvent("exit")
	waitFor(t, "pane_current_command bash", func() bool { return r.format("#{pane_current_command}") == "bash" }, r.state)
	r.waitScreenLine("agent-rc=0")
	want := []string{`submit "/exit"`, "exit"}
	if got := r.eventLines()[1:]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events after start = %q, want %q", got, want)
	}
	if got := readFile(r.log); got != "/exit\r" {
		t.Fatalf("byte log = %q", got)
	}
	if r.format("#{pane_dead}") != "0" {
		t.Fatalf("pane died with the agent")
	}
}
