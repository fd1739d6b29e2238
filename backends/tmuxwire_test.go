package backends

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fmctl/config"
	"fmctl/harness"
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
	wire := &TmuxWire{Exec: &ExecRunner{TracePath: trace}, Binary: "tmux", TracePath: trace}
	plain := &ExecRunner{}
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
			want, wantErr := plain.Run(ctx, Cmd{Path: "tmux", Args: args, Stdin: c.stdin})
			got, gotErr := wire.Run(ctx, Cmd{Path: "tmux", Args: args, Stdin: c.stdin})
			// tmux 3.2's client parses the command too, with getopt, which
			// prints its own complaint before the server's usage line.
			if rest, ok := bytes.CutPrefix(want.Stderr, []byte("tmux: unknown option -- Z\n")); ok {
				want.Stderr = rest
				wantErr = &RunError{Cmd: Cmd{Path: "tmux"}, ExitCode: want.ExitCode, Stderr: string(rest)}
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
			if gotErr != nil && StderrOf(gotErr) != StderrOf(wantErr) {
				t.Errorf("error over the wire %q, from a tmux client %q", StderrOf(gotErr), StderrOf(wantErr))
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
		out, _ := plain.Run(ctx, Cmd{Path: "tmux", Args: []string{"-L", sock, "capture-pane", "-p", "-t", pane}})
		if strings.Count(string(out.Stdout), "héllo; it's") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pane shows %q, want the typed text twice", out.Stdout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The adapter's own operations run over the wire with no tmux process.
func TestTmuxAdapterOverTheWire(t *testing.T) {
	sock, pane := privateTmux(t)
	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	m := config.DefaultTunables().Mux
	m.TmuxSocket = sock
	be, err := Open("tmux", NewExecRunner(trace), os.Getenv, m)
	if err != nil {
		t.Fatal(err)
	}
	tm := be.(*Tmux)
	ctx := context.Background()
	ep := Endpoint{Target: "s:fm-a", Fields: map[string]string{KeyTmuxPane: pane}}
	if err := tm.SendText(ctx, ep, "a paste\nof two lines"); err != nil {
		t.Fatal(err)
	}
	if err := tm.SendKey(ctx, ep, harness.KeyEnter); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := tm.Capture(ctx, ep)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(s.Lines, "\n"), "of two lines") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the paste never showed: %q", s.Lines)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := traceCount(t, trace, "tmux"); n != 0 {
		t.Errorf("%d tmux processes, want 0", n)
	}
	if n := traceCount(t, trace, wireTraceName); n < 3 {
		t.Errorf("%d wire calls, want at least 3", n)
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
	w := &TmuxWire{Exec: &ExecRunner{TracePath: trace}, Binary: "tmux", TracePath: trace}
	out, err := w.Run(ctx, Cmd{Path: "tmux", Args: args})
	if err != nil || strings.TrimSpace(string(out.Stdout)) != pane {
		t.Fatalf("through the shim: %q %v", out.Stdout, err)
	}
	if n := traceCount(t, trace, wireTraceName); n != 0 {
		t.Errorf("a server that does not run the tmux on PATH took %d wire calls", n)
	}

	absent := []string{"-u", "-L", sock + "-none", "display-message", "-p", "x"}
	_, err = (&TmuxWire{Exec: &ExecRunner{}, Binary: "tmux"}).Run(ctx, Cmd{Path: "tmux", Args: absent})
	if err == nil || !strings.Contains(StderrOf(err), "error connecting to") {
		t.Errorf("no server: %v, want the tmux client's own refusal", err)
	}
}

func TestWireVersionSupported(t *testing.T) {
	for v, want := range map[string]bool{
		"3.2": true, "3.3a\n": true, "3.5a": true, "3.7c": true,
		"3.1c": false, "3.8": false, "next-3.8": false, "openbsd-7.6": false, "2.9a": false, "3.3ab": false, "": false,
	} {
		if got := wireVersionSupported(v); got != want {
			t.Errorf("wireVersionSupported(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestWireSocket(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMUX_TMPDIR", dir)
	real, _ := filepath.EvalSymlinks(dir)
	uid := "tmux-" + strconv.Itoa(os.Getuid())
	if err := os.Mkdir(filepath.Join(real, uid), 0o700); err != nil {
		t.Fatal(err)
	}
	env := os.Environ()
	for _, c := range []struct {
		args  []string
		env   []string
		sock  string
		label bool
		ok    bool
	}{
		{[]string{"-u", "-L", "x", "list-sessions"}, nil, filepath.Join(real, uid, "x"), true, true},
		{[]string{"-u", "-S", "/run/s", "list-sessions"}, nil, "/run/s", false, true},
		{[]string{"-u", "list-sessions"}, []string{"TMUX=/run/t,12,0"}, "/run/t", false, true},
		{[]string{"-u", "list-sessions"}, []string{"TMUX="}, filepath.Join(real, uid, "default"), true, true},
		{[]string{"-u", "-L", "x", "list-sessions"}, []string{"TMUX=/run/t,12,0"}, filepath.Join(real, uid, "x"), true, true},
		{[]string{"-u", "-f", "/dev/null", "list-sessions"}, nil, "", false, false},
		{[]string{"-u", "-L", "a/b", "list-sessions"}, nil, "", false, false},
		// Without -u the server prints to the client differently than to
		// the UTF-8 client the wire identifies as.
		{[]string{"-L", "x", "list-sessions"}, nil, "", false, false},
		// An empty label or path is tmux's socket as given (a directory,
		// nothing), never $TMUX's server or the default one.
		{[]string{"-u", "-L", "", "list-sessions"}, []string{"TMUX=/run/t,12,0"}, "", false, false},
		{[]string{"-u", "-L", "", "list-sessions"}, []string{"TMUX="}, "", false, false},
		{[]string{"-u", "-S", "", "list-sessions"}, []string{"TMUX=/run/t,12,0"}, "", false, false},
		{[]string{"-u", "list-sessions"}, []string{"TMUX=,12,0"}, filepath.Join(real, uid, "default"), true, true},
		{[]string{"-u", "list-sessions"}, []string{"TMUX=/run/t"}, "/run/t", false, true},
	} {
		sock, label, rest, ok := wireSocket(c.args, append(env, c.env...))
		if ok != c.ok || sock != c.sock || label != c.label || (ok && rest[0] != "list-sessions") {
			t.Errorf("wireSocket(%q, %q) = %q %v %q %v, want %q %v", c.args, c.env, sock, label, rest, ok, c.sock, c.label)
		}
	}
	// A relative $TMUX_TMPDIR is taken from the working directory, as
	// tmux's realpath takes it, through symlinks and "..".
	t.Chdir(dir)
	deep := filepath.Join(real, "a", "b")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(real, "a", uid), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(deep, filepath.Join(real, "link")); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{
		".":       filepath.Join(real, uid, "x"),
		"a/b/../": filepath.Join(real, "a", uid, "x"),
		"link/..": filepath.Join(real, "a", uid, "x"), // the link's target's parent
	} {
		sock, _, _, ok := wireSocket([]string{"-u", "-L", "x", "ls"}, append(env, "TMUX_TMPDIR="+rel))
		if !ok || sock != want {
			t.Errorf("TMUX_TMPDIR=%s: %q %v, want %q", rel, sock, ok, want)
		}
	}
	// A socket directory open to others is refused, as tmux refuses it.
	if err := os.Chmod(filepath.Join(real, uid), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := wireSocket([]string{"-u", "-L", "x", "ls"}, env); ok {
		t.Error("a world-writable socket directory was taken")
	}
}

// The proven tmux's version is kept in the cache, keyed by the tmux file's
// identity: the next process reads it instead of asking the server, a
// version the cache holds decides (a cached unsupported one sends the call
// to a tmux client), and an entry for another file is asked again and
// replaced.
func TestTmuxWireCachesTheProvenVersion(t *testing.T) {
	sock, pane := privateTmux(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache", "tmux-wire")
	trace := filepath.Join(dir, "trace")
	ctx := context.Background()
	args := []string{"-u", "-L", sock, "display-message", "-p", "-t", pane, "#{pane_id}"}
	run := func() int {
		t.Helper()
		before := traceCount(t, trace, wireTraceName)
		w := &TmuxWire{Exec: &ExecRunner{TracePath: trace}, Binary: "tmux", TracePath: trace, CachePath: cache}
		out, err := w.Run(ctx, Cmd{Path: "tmux", Args: args})
		if err != nil || strings.TrimSpace(string(out.Stdout)) != pane {
			t.Fatalf("display-message: %q %v", out.Stdout, err)
		}
		return traceCount(t, trace, wireTraceName) - before
	}
	if run() != 1 {
		t.Fatal("the first call did not go over the wire")
	}
	real, _ := exec.LookPath("tmux")
	fi, _ := os.Stat(real)
	key := binaryKey(fi)
	version := strings.TrimSpace(string(must(exec.Command("tmux", "-V").Output())))
	if got, want := readString(cache), key+"\t"+strings.TrimPrefix(version, "tmux ")+"\n"; got != want {
		t.Fatalf("the cache holds %q, want %q", got, want)
	}

	if err := os.WriteFile(cache, []byte(key+"\t3.1c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if run() != 0 {
		t.Error("a cached 3.1c still took the wire")
	}

	if err := os.WriteFile(cache, []byte("1:2:3:4:5\t3.1c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if run() != 1 {
		t.Error("an entry for another tmux file decided")
	}
	if got := readString(cache); !strings.HasPrefix(got, key+"\t") {
		t.Errorf("the cache holds %q after the server was asked, want %s's entry", got, key)
	}

	// A symlink in the cache's place is neither read nor replaced.
	decoy := filepath.Join(dir, "decoy")
	if err := os.WriteFile(decoy, []byte(key+"\t3.1c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(cache)
	if err := os.Symlink(decoy, cache); err != nil {
		t.Fatal(err)
	}
	if run() != 1 {
		t.Error("a symlinked cache was read")
	}
	if fi, err := os.Lstat(cache); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlinked cache was replaced")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// A tmux replaced on disk while its server runs (an upgrade) is no longer
// the server's file: the server keeps the old one, so the wire leaves it to
// a tmux client, which speaks whatever the new tmux speaks.
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
	call := func() int {
		t.Helper()
		before := traceCount(t, trace, wireTraceName)
		w := &TmuxWire{Exec: &ExecRunner{TracePath: trace}, Binary: "tmux", TracePath: trace}
		out, err := w.Run(context.Background(), Cmd{Path: "tmux", Args: []string{"-u", "-L", sock, "display-message", "-p", "#{session_name}"}})
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

// A cache that cannot be read or written only costs the question: a cache
// directory that is a file, an oversized or foreign file, and writers
// racing each other leave one whole entry or none, never a wrong one.
func TestTmuxWireCacheSurvivesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	const key = "1:2:3:4:5"
	blocked := filepath.Join(dir, "file")
	if err := os.WriteFile(blocked, []byte(key+"\t3.3a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &TmuxWire{CachePath: filepath.Join(blocked, "tmux-wire")}
	w.cacheVersion(key, "3.3a")
	if v, ok := w.cachedVersion(key); ok {
		t.Errorf("a cache under a file gave %q", v)
	}

	w.CachePath = filepath.Join(dir, "tmux-wire")
	for contents, want := range map[string]string{
		key + "\t3.3a\r\n":                     "3.3a\r", // still 3.3a to wireVersionSupported
		key + "\t3.3a":                         "3.3a",
		key + "\t\n":                           "",
		key + "3.3a\n":                         "",
		"\n" + key + "\t3.3a\n":                "",
		key + "\t" + strings.Repeat("3", 5000): "", // over the size read
	} {
		if err := os.WriteFile(w.CachePath, []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
		if v, ok := w.cachedVersion(key); v != want || ok != (want != "") {
			t.Errorf("cache %.40q: %q %v, want %q", contents, v, ok, want)
		}
	}

	done := make(chan struct{})
	for i := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 20 {
				(&TmuxWire{CachePath: w.CachePath}).cacheVersion(key, "3."+strconv.Itoa(2+i%6))
			}
		}()
	}
	for range 8 {
		<-done
	}
	if v, ok := w.cachedVersion(key); !ok || !wireVersionSupported(v) {
		t.Errorf("after racing writers the cache gives %q %v", v, ok)
	}
}
