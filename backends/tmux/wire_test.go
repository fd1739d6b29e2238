package tmux

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/backends/tmux/wire"
)

// privateTmux starts a tmux server on a private socket under a private
// TMUX_TMPDIR, with one session "s" whose window "fm-a" runs cat, and
// returns its label and the pane's id. The server is killed at cleanup.
func privateTmux(t *testing.T) (sock, pane string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	buf := make([]byte, 6)
	rand.Read(buf)
	sock = "fmwire-" + hex.EncodeToString(buf)
	t.Setenv("TMUX_TMPDIR", t.TempDir())
	t.Setenv("TMUX", "")
	out, err := exec.Command("tmux", "-L", sock, "-f", "/dev/null", "new-session", "-d", "-P", "-F", "#{pane_id}",
		"-s", "s", "-n", "fm-a", "-x", "90", "-y", "20", "cat").CombinedOutput()
	if err != nil {
		t.Fatalf("start tmux: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })
	return sock, strings.TrimSpace(string(out))
}

// optedIn is the wire as FM_TMUX_WIRE=1 runs it (tmux 3.2 to 3.7), so
// these tests speak it to the machine's tmux (3.3a) as to 3.7c.
func optedIn(exec *backends.ExecRunner, trace string) *WireRunner {
	return &WireRunner{Exec: exec, Binary: "tmux", TracePath: trace, Carrier: &wire.Wire{Binary: "tmux", OptIn: true}}
}

// traceCount is how many lines of the trace at path name program.
func traceCount(t *testing.T, path, program string) int {
	t.Helper()
	data, _ := os.ReadFile(path)
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.SplitN(line, "\t", 3); len(f) == 3 && f[1] == program {
			n++
		}
	}
	return n
}

// Every kind of call fmctl makes answers over the wire exactly as a tmux
// client answers it: output, errors, exit codes, a paste's input, and the
// if-shell gate's printed markers; and none of them starts a tmux process.
func TestTmuxWireAnswersAsTheTmuxClient(t *testing.T) {
	sock, pane := privateTmux(t)
	trace := filepath.Join(t.TempDir(), "trace")
	viaWire := optedIn(&backends.ExecRunner{TracePath: trace}, trace)
	plain := &backends.ExecRunner{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	cases := []struct {
		name  string
		args  []string
		stdin []byte
	}{
		{"format", []string{"display-message", "-p", "-t", pane, "#{pane_id}\t#{window_name}\t#{session_name} #{pane_dead} é│"}, nil},
		{"two commands", []string{"display-message", "-p", "-t", pane, "#{cursor_y} #{cursor_x}", ";", "capture-pane", "-p", "-t", pane}, nil},
		{"list", []string{"list-windows", "-a", "-F", "#{session_name}:#{window_name} #{pane_id}"}, nil},
		{"absent pane", []string{"display-message", "-p", "-t", "%999", "#{pane_id}"}, nil},
		{"unknown command", []string{"no-such-command"}, nil},
		{"bad flag", []string{"send-keys", "-Z"}, nil},
		{"gate refused", []string{"if-shell", "-F", "-t", pane, "#{==:#{window_name},other}", "send-keys -t " + pane + " Escape ; display-message -p " + gateSent, "display-message -p " + gateRefused}, nil},
		{"typed", []string{"send-keys", "-t", pane, "-l", "--", "héllo; it's"}, nil},
		{"paste", []string{"load-buffer", "-b", "fmwire", "-", ";", "show-buffer", "-b", "fmwire", ";", "delete-buffer", "-b", "fmwire"}, bytes.Repeat([]byte("line of a long paste\n"), 3000)},
		{"empty input", []string{"load-buffer", "-b", "fmwire2", "-"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-u", "-L", sock}, c.args...)
			want, wantErr := plain.Run(ctx, backends.Cmd{Path: "tmux", Args: args, Stdin: c.stdin})
			got, gotErr := viaWire.Run(ctx, backends.Cmd{Path: "tmux", Args: args, Stdin: c.stdin})
			// tmux 3.2's client parses the command too, with getopt, which
			// prints its own complaint before the server's usage line.
			if rest, ok := bytes.CutPrefix(want.Stderr, []byte("tmux: unknown option -- Z\n")); ok {
				want.Stderr = rest
				wantErr = &backends.RunError{Cmd: backends.Cmd{Path: "tmux"}, ExitCode: want.ExitCode, Stderr: string(rest)}
			}
			if (wantErr == nil) != (gotErr == nil) || want.ExitCode != got.ExitCode {
				t.Fatalf("wire: exit %d err %v; tmux client: exit %d err %v", got.ExitCode, gotErr, want.ExitCode, wantErr)
			}
			if !bytes.Equal(got.Stdout, want.Stdout) {
				t.Errorf("stdout over the wire %q, from a tmux client %q", got.Stdout, want.Stdout)
			}
			if !bytes.Equal(got.Stderr, want.Stderr) {
				t.Errorf("stderr over the wire %q, from a tmux client %q", got.Stderr, want.Stderr)
			}
			if gotErr != nil && backends.StderrOf(gotErr) != backends.StderrOf(wantErr) {
				t.Errorf("error over the wire %q, from a tmux client %q", backends.StderrOf(gotErr), backends.StderrOf(wantErr))
			}
		})
	}
	if n := traceCount(t, trace, "tmux"); n != 0 {
		t.Errorf("the wire started %d tmux processes, want 0", n)
	}
	if n := traceCount(t, trace, wireTraceName); n != len(cases) {
		t.Errorf("the trace names %d wire calls, want %d", n, len(cases))
	}
	// The typed text reached the pane (cat echoes it) once per runner.
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := plain.Run(ctx, backends.Cmd{Path: "tmux", Args: []string{"-L", sock, "capture-pane", "-p", "-t", pane}})
		if strings.Count(string(out.Stdout), "héllo; it's") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pane shows %q, want the typed text twice", out.Stdout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A server the wire has not proven gets a tmux client: one whose binary is
// not the tmux on PATH (a shim, a fake), or none at all.
func TestTmuxWireLeavesUnprovenServersToTheClient(t *testing.T) {
	sock, pane := privateTmux(t)
	dir := t.TempDir()
	shim := filepath.Join(dir, "tmux")
	real, _ := exec.LookPath("tmux")
	if err := os.WriteFile(shim, []byte("#!/bin/sh\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "trace")
	ctx := context.Background()
	args := []string{"-u", "-L", sock, "display-message", "-p", "-t", pane, "#{pane_id}"}

	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	w := optedIn(&backends.ExecRunner{TracePath: trace}, trace)
	out, err := w.Run(ctx, backends.Cmd{Path: "tmux", Args: args})
	if err != nil || strings.TrimSpace(string(out.Stdout)) != pane {
		t.Fatalf("through the shim: %q %v", out.Stdout, err)
	}
	if n := traceCount(t, trace, wireTraceName); n != 0 {
		t.Errorf("a server that does not run the tmux on PATH took %d wire calls", n)
	}

	absent := []string{"-u", "-L", sock + "-none", "display-message", "-p", "x"}
	_, err = optedIn(&backends.ExecRunner{}, "").Run(ctx, backends.Cmd{Path: "tmux", Args: absent})
	if err == nil || !strings.Contains(backends.StderrOf(err), "error connecting to") {
		t.Errorf("no server: %v, want the tmux client's own refusal", err)
	}
}

// A tmux replaced on disk while its server runs (an upgrade) is no longer
// the server's file: the server keeps the old one, so the wire leaves it to
// a tmux client, which speaks whatever the new tmux speaks, even in the
// process whose earlier call went over the wire.
func TestTmuxWireLeavesAServerWhoseTmuxWasReplaced(t *testing.T) {
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "tmux")
	copyBinary := func() {
		t.Helper()
		data, err := os.ReadFile(real)
		if err != nil {
			t.Fatal(err)
		}
		tmp := bin + ".new"
		if err := os.WriteFile(tmp, data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, bin); err != nil {
			t.Fatal(err)
		}
	}
	copyBinary()
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("TMUX_TMPDIR", t.TempDir())
	t.Setenv("TMUX", "")
	sock := "fmwire-upgrade"
	if out, err := exec.Command(bin, "-L", sock, "-f", "/dev/null", "new-session", "-d", "-s", "s", "cat").CombinedOutput(); err != nil {
		t.Fatalf("start tmux: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command(bin, "-L", sock, "kill-server").Run() })
	trace := filepath.Join(dir, "trace")
	// One runner for both calls, as one fmctl process makes them: a server
	// the first call proved is proven again on the second call's connection.
	w := optedIn(&backends.ExecRunner{TracePath: trace}, trace)
	call := func() int {
		t.Helper()
		before := traceCount(t, trace, wireTraceName)
		out, err := w.Run(context.Background(), backends.Cmd{Path: "tmux", Args: []string{"-u", "-L", sock, "display-message", "-p", "#{session_name}"}})
		if err != nil || strings.TrimSpace(string(out.Stdout)) != "s" {
			t.Fatalf("display-message: %q %v", out.Stdout, err)
		}
		return traceCount(t, trace, wireTraceName) - before
	}
	if call() != 1 {
		t.Fatal("the server running the tmux on PATH did not take the wire")
	}
	copyBinary()
	if call() != 0 {
		t.Error("the wire spoke to a server whose tmux file was replaced")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
