package realtmux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Under cron, systemd or a bare CI shell there is no UTF-8 locale and no
// TMUX, and tmux 3.3a then prints a format's tab as "_": a spawn must still
// read its new pane's ids, and a send must still find the pane.
func TestSpawnAndSendWithoutAUTF8Locale(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	dir := t.TempDir()
	events := filepath.Join(dir, "events.log")
	path := fakeClaudePath(t, dir)
	s := newServer(t, path)
	s.tmux("set-environment", "-g", "FAKEAGENT_EVENTS", events)
	wt := filepath.Join(dir, "wt")
	if out, err := exec.Command("git", "init", "-q", wt).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	brief := filepath.Join(dir, "brief.txt")
	if err := os.WriteFile(brief, []byte("Do the thing.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// tmux takes any TMUX in its environment, even an empty one, as a sign
	// of a UTF-8 client, so this runs the product with none at all.
	var env []string
	for _, kv := range s.env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "TMUX", "LANG", "LC_ALL", "LC_CTYPE", "PATH":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, path, "LC_ALL=C", "FM_HOME="+s.home, "FM_TMUX_SOCKET="+s.sock, "FM_TMUX_SESSION="+session)
	run := func(bin string, args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, bin), args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s with LC_ALL=C and no TMUX: %v\n%s", bin, strings.Join(args, " "), err, out)
		}
	}
	run("fm-spawn", "t7", "--harness", "claude", "--worktree", wt, "--brief", brief)
	record := readFile(filepath.Join(s.home, "state", "t7.meta"))
	if !strings.Contains(record, "\ntmux_pane_id=%") || !strings.Contains(record, "\ntmux_window_id=@") {
		t.Fatalf("the record lacks the pane and window ids:\n%s", record)
	}
	run("fm-send", "t7", "hello without utf-8")
	waitFor(t, 10*time.Second, "the agent to receive the message",
		func() bool { return strings.Contains(readFile(events), `submit "hello without utf-8"`) },
		func() string { return readFile(events) })
}
