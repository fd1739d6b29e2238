package realtmux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The first real spawn on a stock Debian: tmux runs the pane's shell as a
// login shell, /etc/profile sets PATH outright, and an agent only the
// caller's PATH finds is not found there. The refusal names where the
// caller's PATH has it and the config/fm.toml line that pins it; written
// as printed, that line makes the same spawn work.
func TestLoginShellPathPinAsHinted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := fakeClaudePath(t, dir)
	bin := filepath.Join(dir, "bin", "claude")
	if !loginResetsPath(t) {
		t.Skip("this machine's login profile keeps the caller's PATH, so a pane finds what the caller finds")
	}
	s := newServer(t, path)
	// tmux's own default: the default shell, as a login shell.
	s.tmux("set-option", "-g", "default-command", "")
	wt := filepath.Join(s.dir, "wt-l1")
	(&agent{s: s, id: "l1", wt: wt}).relaunchable("Do l1.\n")
	env := []string{"FM_TMUX_SESSION=" + session, path, "FM_SPAWN_WAIT=30s"}

	res := s.run("", env, "fm-spawn", "l1", "--harness", "claude", "--worktree", wt)
	wantCode(t, res, 1, "fm-spawn l1 in a login shell without claude")
	fmToml := filepath.Join(s.home, "config", "fm.toml")
	line := `binary = "` + bin + `"`
	for _, want := range []string{
		"claude: command not found",
		"hint: the pane's shell did not find claude on its PATH, but yours finds " + bin,
		"hint: pin it: in " + fmToml + ", under [harness.claude], write " + line,
	} {
		if !strings.Contains(res.stderr, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, res)
		}
	}

	if err := os.WriteFile(fmToml, []byte("[harness.claude]\n"+line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = s.run("", env, "fm-spawn", "l1", "--harness", "claude", "--worktree", wt)
	wantCode(t, res, 0, "fm-spawn l1 with the pin the hint named")
	if !strings.Contains(res.stdout, "ready=confirmed") {
		t.Fatalf("the pinned spawn is not ready:\n%s", res)
	}
}

// loginResetsPath reports whether a login bash here replaces the PATH it
// was given (Debian's and Ubuntu's /etc/profile do).
func loginResetsPath(t *testing.T) bool {
	t.Helper()
	cmd := exec.Command(bashBin, "-lc", `printf %s "$PATH"`)
	cmd.Env = []string{"PATH=/fmctl-login-probe:/usr/bin:/bin", "HOME=" + t.TempDir()}
	out, err := cmd.Output()
	return err == nil && !strings.Contains(string(out), "/fmctl-login-probe")
}
