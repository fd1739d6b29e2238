package realtmux

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// setRecord rewrites one key of the task's record.
func (a *agent) setRecord(key, value string) {
	a.s.t.Helper()
	path := filepath.Join(a.s.home, "state", a.id+".meta")
	var out []string
	found := false
	for _, l := range splitLines(readFile(path)) {
		if k, _, _ := strings.Cut(l, "="); k == key {
			l, found = key+"="+value, true
		}
		out = append(out, l)
	}
	if !found {
		a.s.t.Fatalf("record %s has no %s=", path, key)
	}
	a.s.writeState(a.id+".meta", strings.Join(out, "\n")+"\n")
}

// gatedVerbs are the two key verbs that pass the gate with their key, in
// one tmux call when the record names the pane's ids and pid.
var gatedVerbs = []struct {
	name string
	bin  string
	args []string
}{
	{"fm-send --key Escape", "fm-send", []string{"t1", "--key", "Escape"}},
	{"fm-control interrupt", "fm-control", []string{"interrupt", "t1"}},
}

// A key the record's pane would not take (its window renamed, a record
// pointing at another task's pane, the wrong harness, a stopped agent, a
// dead pane) is refused, as the full read refused it: no byte reaches any
// agent, and the refusal says why.
func TestGatedKeysRefuseWhatTheFullReadRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(a, other *agent)
		want  string
	}{
		{"renamed-window", func(a, _ *agent) { a.s.tmux("rename-window", "-t", a.pane, "renamed") }, "drifted"},
		{"foreign-pane", func(a, other *agent) {
			// The record names t2's pane, window and shell: tmux's check of
			// the label refuses it, and the full read calls it drifted.
			a.setRecord("tmux_pane_id", other.pane)
			a.setRecord("tmux_window_id", other.s.format(other.pane, "#{window_id}"))
			a.setRecord("tmux_pane_pid", other.s.format(other.pane, "#{pane_pid}"))
		}, "drifted"},
		{"wrong-harness", func(a, _ *agent) { a.setRecord("harness", "codex") }, "not the task's recorded harness codex"},
		{"stopped-agent", func(a, _ *agent) {
			if err := syscall.Kill(a.pid(), syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "the agent to stop", func() bool { return a.command() == "bash" }, a.state)
		}, "stopped"},
		{"dead-pane", func(a, _ *agent) {
			a.s.tmux("set-option", "-w", "-t", a.pane, "remain-on-exit", "on")
			shell, err := strconv.Atoi(a.s.format(a.pane, "#{pane_pid}"))
			if err != nil {
				t.Fatal(err)
			}
			_ = syscall.Kill(a.pid(), syscall.SIGKILL)
			_ = syscall.Kill(shell, syscall.SIGKILL)
			waitFor(t, 5*time.Second, "the pane to die", func() bool { return a.s.format(a.pane, "#{pane_dead}") == "1" }, a.state)
		}, "t1"},
	}
	for _, c := range cases {
		for _, v := range gatedVerbs {
			t.Run(c.name+"/"+v.bin, func(t *testing.T) {
				t.Parallel()
				s := newServer(t)
				a := s.startAgent("t1", "claude")
				other := s.startAgent("t2", "claude")
				c.setup(a, other)
				before := a.bytes()
				r := s.run("", nil, v.bin, v.args...)
				wantCode(t, r, 1, v.name+" ("+c.name+")")
				if !strings.Contains(r.stderr, c.want) {
					t.Fatalf("stderr = %q, want it to say %q", r.stderr, c.want)
				}
				if a.bytes() != before || other.bytes() != "" {
					t.Fatalf("a refused key reached an agent: t1 %q (was %q), t2 %q", a.bytes(), before, other.bytes())
				}
			})
		}
	}
}

// The gated call is one tmux process; a recorded pid that is now another
// pane's (the record's pane respawned) makes tmux refuse the key there, and
// the full read then sends it to the recorded pane, never to the pane the
// stale pid runs in.
func TestGatedKeyIsOneCallAndAStalePidFallsBackToTheFullRead(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	other := s.startAgent("t2", "claude")
	for _, v := range gatedVerbs {
		trace := s.traceFile("gated-" + v.bin)
		r := s.run("", []string{"FM_RUNNER_TRACE=" + trace}, v.bin, v.args...)
		wantCode(t, r, 0, v.name)
		if n, _, lines := traceCounts(t, trace); n != 1 || !strings.Contains(lines[0], `"if-shell"`) {
			t.Fatalf("%s made %d tmux calls, want one gated if-shell:\n%s", v.name, n, strings.Join(lines, "\n"))
		}
	}
	a.assertBytes("\x1b\x1b")

	a.setRecord("tmux_pane_pid", other.s.format(other.pane, "#{pane_pid}"))
	trace := s.traceFile("stale")
	r := s.run("", []string{"FM_RUNNER_TRACE=" + trace}, "fm-send", "t1", "--key", "Escape")
	wantCode(t, r, 0, "fm-send --key Escape with a stale pid")
	if n, _, lines := traceCounts(t, trace); n != 3 {
		t.Fatalf("a stale pid made %d tmux calls, want 3 (the refused gated call, the full read, the key):\n%s", n, strings.Join(lines, "\n"))
	}
	a.assertBytes("\x1b\x1b\x1b")
	if other.bytes() != "" {
		t.Fatalf("the pane the stale pid runs in got %q", other.bytes())
	}
}

// The gap an Escape needs before the next input (text right after it reads
// as Alt+<char>) is no longer slept through by the key's own process: it is
// recorded in the input lock, and the next send waits out the rest. A
// message sent at once after the key still arrives as text.
func TestTextRightAfterAnEscapeKeyIsNotReadAsAlt(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	// An ESC the agent reads with a letter within 150 ms is Alt+<letter>.
	a := s.startAgent("t1", "claude", agentEnv("FAKEAGENT_ALT_WINDOW=150ms"))
	r := s.run("", nil, "fm-send", "t1", "--key", "Escape")
	wantCode(t, r, 0, "fm-send --key Escape")
	r = s.run("", nil, "fm-send", "t1", "hello")
	wantCode(t, r, 0, "fm-send hello right after the Escape")
	a.quiet()
	if got := a.submitted(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("submitted %q, want [hello] after one escape\n%s", got, a.state())
	}
	if n := len(a.eventsWithPrefix("interrupt escape")); n != 1 {
		t.Fatalf("%d escapes read, want 1\n%s", n, a.state())
	}
}

// muse restores a cancelled prompt, so fm-send --key Escape sends its clear
// key (C-u) a press gap later. An agent the Escape ended has handed the pane
// back to its shell by then: the clear passes the gate too, and never
// reaches the shell (whose readline here runs a command on C-u).
func TestTheClearAfterAnEscapeNeverReachesTheShell(t *testing.T) {
	t.Parallel()
	s, a, marker := museEndedByEscape(t)
	r := s.run("", nil, "fm-send", "t1", "--key", "Escape")
	wantCode(t, r, 1, "fm-send --key Escape to a muse the Escape ends")
	if !strings.Contains(r.stderr, "Escape reached") || !strings.Contains(r.stderr, "has no agent, only a shell") {
		t.Fatalf("stderr = %q, want it to say the Escape went and the clear found only a shell", r.stderr)
	}
	waitFor(t, 10*time.Second, "the pane to return to bash", func() bool { return a.command() == "bash" }, a.state)
	a.assertShellNeverRan(marker)
}

// An interrupt's later keys pass the gate like its first: muse's Escape
// can end it, and the C-u that clears its composer must then not reach the
// shell that took the pane back.
func TestAnInterruptsClearNeverReachesTheShell(t *testing.T) {
	t.Parallel()
	s, a, marker := museEndedByEscape(t)
	r := s.run("", nil, "fm-control", "interrupt", "t1")
	waitFor(t, 10*time.Second, "the pane to return to bash", func() bool { return a.command() == "bash" }, a.state)
	a.assertShellNeverRan(marker)
	wantCode(t, r, 1, "fm-control interrupt to a muse the Escape ends")
	if !strings.Contains(r.stderr, "task t1's agent is 'dead' after its interrupt key") {
		t.Fatalf("stderr = %q, want it to say the agent is dead after its interrupt key", r.stderr)
	}
}

// museEndedByEscape starts t1, a muse that exits on Escape, on a server
// whose shells run a command on C-u (muse's clear key), so a C-u that
// reaches the shell leaves the returned marker file.
func museEndedByEscape(t *testing.T) (*server, *agent, string) {
	dir := t.TempDir()
	marker, inputrc := filepath.Join(dir, "shell-read-C-u"), filepath.Join(dir, "inputrc")
	if err := os.WriteFile(inputrc, []byte(`"\C-u": "touch `+marker+`\n"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, "INPUTRC="+inputrc)
	return s, s.startAgent("t1", "muse", agentEnv("FAKEAGENT_INTERRUPT_EXITS=1")), marker
}
