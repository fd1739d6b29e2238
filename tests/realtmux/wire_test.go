package realtmux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wireTrace splits an FM_RUNNER_TRACE into tmux processes and calls carried
// over the wire.
func wireTrace(t *testing.T, path string) (procs, wire int, lines []string) {
	t.Helper()
	_, _, lines = traceCounts(t, path)
	for _, l := range lines {
		switch filepath.Base(strings.SplitN(l, "\t", 3)[1]) {
		case "tmux":
			procs++
		case "tmux (wire)":
			wire++
		}
	}
	return procs, wire, lines
}

// Which way the verbs reach tmux follows FM_TMUX_WIRE and the release: by
// default the wire only on tmux 3.7c (the machine's 3.3a, which exits on a
// malformed message, gets a tmux client per call and no wire traffic at
// all), with FM_TMUX_WIRE=1 the wire on any release from 3.2 to 3.7, with
// FM_TMUX_WIRE=0 never. Every way delivers the same bytes.
func TestVerbsTakeTheWireOnlyWhereAllowed(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	out, err := exec.Command(tmuxBin, "-V").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(out))
	verbs := []struct {
		bin  string
		args []string
	}{
		{"fm-send", []string{"t1", "--key", "Escape"}},
		{"fm-control", []string{"interrupt", "t1"}},
		{"fm-send", []string{"t1", "typed text"}},
		{"fm-send", []string{"t1", "a paste\nof two lines"}},
		{"fm-control", []string{"status", "t1"}},
		{"fm-control", []string{"list"}},
	}
	var events []string
	for _, setting := range []struct {
		env  []string
		wire bool
	}{
		{nil, version == "tmux 3.7c"},
		{[]string{"FM_TMUX_WIRE=1"}, true},
		{[]string{"FM_TMUX_WIRE=0"}, false},
	} {
		for i, v := range verbs {
			name := v.bin + " " + strings.Join(v.args, " ") + " " + strings.Join(setting.env, " ") + " on " + version
			trace := s.traceFile("wire-" + string(rune('a'+i)) + strings.Join(setting.env, ""))
			r := s.run("", append(setting.env, "FM_RUNNER_TRACE="+trace), v.bin, v.args...)
			wantCode(t, r, 0, name)
			procs, wire, lines := wireTrace(t, trace)
			if !setting.wire && (wire != 0 || procs == 0) {
				t.Fatalf("%s: %d tmux processes and %d wire calls, want only processes:\n%s", name, procs, wire, strings.Join(lines, "\n"))
			}
			if setting.wire && (procs != 0 || wire == 0) {
				t.Fatalf("%s: %d tmux processes and %d wire calls, want only wire calls:\n%s", name, procs, wire, strings.Join(lines, "\n"))
			}
		}
		events = append(events, "interrupt escape", "interrupt escape", `submit "typed text"`, `paste "a paste\nof two lines"`, `submit "a paste\nof two lines"`)
	}
	a.assertEvents(events...)
}

// A tmux server that is not the tmux on PATH (here, reached through a
// wrapper script named tmux) is never spoken to over the wire, even with
// FM_TMUX_WIRE=1: the wrapper runs for every call.
func TestWireLeavesAWrappedTmuxToItsWrapper(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$*\" >> " + shellQuote(log) + "\nexec " + shellQuote(tmuxBin) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	trace := s.traceFile("wrapped")
	r := s.run("", []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "FM_RUNNER_TRACE=" + trace, "FM_TMUX_WIRE=1"}, "fm-send", "t1", "--key", "Escape")
	wantCode(t, r, 0, "fm-send --key Escape through a wrapper")
	if procs, wire, lines := wireTrace(t, trace); wire != 0 || procs == 0 {
		t.Fatalf("%d tmux processes and %d wire calls, want only processes:\n%s", procs, wire, strings.Join(lines, "\n"))
	}
	if calls := readFile(log); !strings.Contains(calls, "if-shell") {
		t.Fatalf("the wrapper saw %q, want the gated key", calls)
	}
	a.assertBytes("\x1b")
}

// A tmux server that stops answering (here, SIGSTOPped) ends a wire call
// (FM_TMUX_WIRE=1) at FM_MUX_TIMEOUT with the same words as a hung tmux
// client, and the next send goes through once it answers again.
func TestAStoppedServerEndsAWireCallAtTheTimeout(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	pid, err := strconv.Atoi(strings.TrimSpace(s.tmux("display-message", "-p", "#{pid}")))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	r := s.run("", []string{"FM_MUX_TIMEOUT=1", "FM_TMUX_WIRE=1"}, "fm-send", "t1", "hello")
	resume()
	wantCode(t, r, 1, "fm-send to a stopped tmux server")
	if !strings.Contains(r.stderr, "timed out after 1s") {
		t.Fatalf("stderr = %q, want it to name the timed-out call", r.stderr)
	}
	if r.elapsed > 5*time.Second {
		t.Fatalf("fm-send took %v with FM_MUX_TIMEOUT=1", r.elapsed)
	}
	r = s.run("", []string{"FM_SEND_LOCK_WAIT=2", "FM_TMUX_WIRE=1"}, "fm-send", "t1", "hello")
	wantCode(t, r, 0, "fm-send once the server answers again")
	a.assertBytes("hello\r")
}
