package wire

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets this test binary stand in for tmux's -V: run as
// `<test binary> -V` with FMWIRE_TEST_VERSION set, it prints that version
// as tmux does (and notes the question in FMWIRE_TEST_VERSION_LOG). The
// fake servers run in this process, so the program a server's socket
// proves is the test binary; naming it as the wire's tmux lets a test
// choose what the proven file reports.
func TestMain(m *testing.M) {
	if v, ok := os.LookupEnv("FMWIRE_TEST_VERSION"); ok && len(os.Args) == 2 && os.Args[1] == "-V" {
		if log := os.Getenv("FMWIRE_TEST_VERSION_LOG"); log != "" {
			f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err == nil {
				fmt.Fprintln(f, v)
				f.Close()
			}
		}
		fmt.Println("tmux " + v)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The releases the wire speaks to: by default only 3.7c, the one tag it
// was run against among the releases that drop a bad client instead of
// exiting; with FM_TMUX_WIRE=1 any release whose protocol it follows.
func TestReleasesTheWireSpeaksTo(t *testing.T) {
	for v, want := range map[string][2]bool{ // {onByDefault, protocolKnown}
		"3.7c": {true, true},
		"3.7":  {false, true}, "3.7a": {false, true}, "3.7b": {false, true},
		"3.2": {false, true}, "3.3a": {false, true}, "3.5a": {false, true}, "3.6b": {false, true},
		"3.3a\n": {false, false}, "3.3a\r": {false, false}, "3.1c": {false, false}, "3.8": {false, false},
		"next-3.8": {false, false}, "openbsd-7.6": {false, false}, "2.9a": {false, false}, "3.3ab": {false, false}, "": {false, false},
	} {
		if got := [2]bool{onByDefault(v), protocolKnown(v)}; got != want {
			t.Errorf("%q: onByDefault, protocolKnown = %v, want %v", v, got, want)
		}
	}
	// Every release on by default is one whose server drops a client for a
	// bad message (3.7 and later) and whose protocol the wire follows.
	for minor := '0'; minor <= '9'; minor++ {
		for _, suffix := range []string{"", "a", "b", "c", "d"} {
			v := "3." + string(minor) + suffix
			if onByDefault(v) && (minor < '7' || !protocolKnown(v)) {
				t.Errorf("%s is on by default but can die of a bad message, or is not a protocol the wire follows", v)
			}
		}
	}
}

func TestServerSocket(t *testing.T) {
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
		sock, label, rest, ok := serverSocket(c.args, append(env, c.env...))
		if ok != c.ok || sock != c.sock || label != c.label || (ok && rest[0] != "list-sessions") {
			t.Errorf("serverSocket(%q, %q) = %q %v %q %v, want %q %v", c.args, c.env, sock, label, rest, ok, c.sock, c.label)
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
		sock, _, _, ok := serverSocket([]string{"-u", "-L", "x", "ls"}, append(env, "TMUX_TMPDIR="+rel))
		if !ok || sock != want {
			t.Errorf("TMUX_TMPDIR=%s: %q %v, want %q", rel, sock, ok, want)
		}
	}
	// A socket directory open to others is refused, as tmux refuses it.
	if err := os.Chmod(filepath.Join(real, uid), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := serverSocket([]string{"-u", "-L", "x", "ls"}, env); ok {
		t.Error("a world-writable socket directory was taken")
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
	w := &Wire{CachePath: filepath.Join(blocked, "tmux-wire")}
	w.cacheVersion(key, "3.3a")
	if v, ok := w.cachedVersion(key); ok {
		t.Errorf("a cache under a file gave %q", v)
	}

	w.CachePath = filepath.Join(dir, "tmux-wire")
	for contents, want := range map[string]string{
		key + "\t3.3a\r\n":                     "3.3a\r", // not a release: declined
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
				(&Wire{CachePath: w.CachePath}).cacheVersion(key, "3."+strconv.Itoa(2+i%6))
			}
		}()
	}
	for range 8 {
		<-done
	}
	if v, ok := w.cachedVersion(key); !ok || !protocolKnown(v) {
		t.Errorf("after racing writers the cache gives %q %v", v, ok)
	}
}
