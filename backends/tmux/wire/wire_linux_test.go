package wire

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// selfAsTmux makes this test binary the tmux the wire proves servers
// against, reporting version to -V, and returns the file where each -V
// is noted.
func selfAsTmux(t *testing.T, version string) (bin, asked string) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	asked = filepath.Join(t.TempDir(), "asked")
	t.Setenv("FMWIRE_TEST_VERSION", version)
	t.Setenv("FMWIRE_TEST_VERSION_LOG", asked)
	return bin, asked
}

// carried runs one command through w at a fake server that answers it,
// and reports whether the wire carried it. A call not carried never
// reached the fake: a connection that sends no command fails the test (the
// script reads a header that never comes), and the first command the fake
// reads must be the call's own, never a question of the wire's.
func carried(t *testing.T, w *Wire) bool {
	t.Helper()
	sock, got := answering(t)
	return carriedTo(t, w, sock, got)
}

// answering is a fake server that answers one command, sent on got, with
// exit 0.
func answering(t *testing.T) (sock string, got chan []string) {
	got = make(chan []string, 1)
	sock = fakeServer(t, true, func(f *fakeConn) {
		got <- f.command()
		f.send(msg(msgExit, []int32{0}, ""))
		f.waitEOF()
	})
	return sock, got
}

func carriedTo(t *testing.T, w *Wire, sock string, got chan []string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := w.Run(ctx, []string{"-u", "-S", sock, "display-message", "fmwire"}, os.Environ(), nil)
	if errors.Is(err, ErrNotSent) {
		return false
	}
	if err != nil {
		t.Fatalf("over the wire: %v", err)
	}
	select {
	case args := <-got:
		if !slices.Equal(args, []string{"display-message", "fmwire"}) {
			t.Errorf("the server got %q, want the call's command", args)
		}
	case <-time.After(5 * time.Second):
		t.Error("the call was carried, but the server never read its command")
	}
	return true
}

func lines(path string) int {
	data, _ := os.ReadFile(path)
	return strings.Count(string(data), "\n")
}

// The version that decides is the one the proven tmux file prints for -V,
// never one asked of the server: by default only 3.7c is spoken to, and
// FM_TMUX_WIRE=1 (OptIn) adds the releases from 3.2 to 3.7 and no other.
func TestTheVersionIsTmuxsOwnAndDecides(t *testing.T) {
	for _, c := range []struct {
		version string
		optIn   bool
		want    bool
	}{
		{"3.7c", false, true},
		{"3.3a", false, false},
		{"3.6b", false, false},
		{"3.7b", false, false},
		{"3.3a", true, true},
		{"3.6b", true, true},
		{"3.8", true, false},
		{"next-3.8", true, false},
	} {
		bin, asked := selfAsTmux(t, c.version)
		if got := carried(t, &Wire{Binary: bin, OptIn: c.optIn}); got != c.want {
			t.Errorf("tmux -V says %s, OptIn %v: carried %v, want %v", c.version, c.optIn, got, c.want)
		}
		if n := lines(asked); n != 1 {
			t.Errorf("tmux -V says %s: asked %d times, want once", c.version, n)
		}
	}
}

// A call to a socket with no server behind it (fm-spawn's first
// new-session, a fake tmux's world) goes to a tmux client without running
// tmux -V: a fake tmux logs every call it gets.
func TestNoServerAsksNothing(t *testing.T) {
	bin, asked := selfAsTmux(t, "3.7c")
	sock := filepath.Join(t.TempDir(), "none")
	_, err := (&Wire{Binary: bin}).Run(context.Background(), []string{"-u", "-S", sock, "new-session", "-d"}, os.Environ(), nil)
	if !errors.Is(err, ErrNotSent) {
		t.Fatalf("no server: %v, want ErrNotSent", err)
	}
	if n := lines(asked); n != 0 {
		t.Errorf("tmux -V ran %d times for a call to no server", n)
	}
}

// The version is kept per tmux file (its identity) in this process and in
// the cache, so a process asks `tmux -V` once and the next none; a cached
// version decides (even against what -V would say now), an entry for
// another file is asked again and replaced, and a symlink in the cache's
// place is neither read nor replaced.
func TestTheVersionIsCachedPerTmuxFile(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache", "tmux-wire")
	bin, asked := selfAsTmux(t, "3.7c")
	w := &Wire{Binary: bin, CachePath: cache}
	for range 2 {
		if !carried(t, w) {
			t.Fatal("3.7c was not carried")
		}
	}
	if n := lines(asked); n != 1 {
		t.Fatalf("one process asked -V %d times, want once", n)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	key := binaryKey(fi)
	if got := readString(cache); got != key+"\t3.7c\n" {
		t.Fatalf("the cache holds %q, want %q", got, key+"\t3.7c\n")
	}

	t.Setenv("FMWIRE_TEST_VERSION", "3.3a")
	if !carried(t, &Wire{Binary: bin, CachePath: cache}) || lines(asked) != 1 {
		t.Error("the next process did not take the cached 3.7c without asking")
	}
	if err := os.WriteFile(cache, []byte(key+"\t3.1c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FMWIRE_TEST_VERSION", "3.7c")
	if carried(t, &Wire{Binary: bin, CachePath: cache}) {
		t.Error("a cached 3.1c was carried")
	}

	if err := os.WriteFile(cache, []byte("1:2:3:4:5\t3.1c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !carried(t, &Wire{Binary: bin, CachePath: cache}) {
		t.Error("an entry for another tmux file decided")
	}
	if got := readString(cache); got != key+"\t3.7c\n" || lines(asked) != 2 {
		t.Errorf("the cache holds %q after -V was asked (%d times), want %s's entry", got, lines(asked), key)
	}

	decoy := filepath.Join(dir, "decoy")
	if err := os.WriteFile(decoy, []byte(key+"\t3.1c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(cache)
	if err := os.Symlink(decoy, cache); err != nil {
		t.Fatal(err)
	}
	if !carried(t, &Wire{Binary: bin, CachePath: cache}) {
		t.Error("a symlinked cache was read")
	}
	if fi, err := os.Lstat(cache); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlinked cache was replaced")
	}
}

// Every connection proves its server again: a socket whose server was the
// proven tmux on one call and another program on the next (the server
// behind a path replaced within one process's life) gets nothing over the
// wire on the second.
func TestEveryCallProvesItsServer(t *testing.T) {
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	bin, _ := selfAsTmux(t, "3.7c")
	w := &Wire{Binary: bin}
	sock, got := answering(t)
	if !carriedTo(t, w, sock, got) {
		t.Fatal("the proven server was not spoken to")
	}
	// The fake's socket file gives way to a real tmux server's (it serves
	// one client, and keeps listening on the unlinked file).
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(real, "-S", sock, "-f", "/dev/null", "new-session", "-d", "cat")
	cmd.Env = without(os.Environ(), "TMUX")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("start tmux: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command(real, "-S", sock, "kill-server").Run() })
	if carriedTo(t, w, sock, got) {
		t.Error("the wire spoke to a server that is not the proven tmux, on a socket proven by the call before")
	}
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
