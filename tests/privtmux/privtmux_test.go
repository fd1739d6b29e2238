package privtmux

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"testing"
)

// A private server's socket file is gone once Kill returns, for a server
// running and for one already killed; another name's file is left.
func TestKillRemovesOnlyItsOwnSocket(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not found on PATH")
	}
	for _, killedBefore := range []bool{false, true} {
		var rnd [6]byte
		rand.Read(rnd[:])
		sock := "privtmux-test-" + hex.EncodeToString(rnd[:])
		tmux := func(args ...string) *exec.Cmd { return exec.Command("tmux", append([]string{"-L", sock}, args...)...) }
		if out, err := tmux("-f", "/dev/null", "new-session", "-d", "-s", "t").CombinedOutput(); err != nil {
			t.Fatalf("tmux new-session: %v\n%s", err, out)
		}
		printed, _ := tmux("display-message", "-p", "#{socket_path}").Output()
		path := string(printed[:len(printed)-1])
		if killedBefore {
			_ = tmux("kill-server").Run()
		}
		if _, err := os.Lstat(path); err != nil {
			t.Fatalf("no socket file at %s before Kill (killed before: %v): %v", path, killedBefore, err)
		}
		Kill(tmux, sock)
		if _, err := os.Lstat(path); err == nil {
			t.Errorf("socket file %s still there after Kill (killed before: %v)", path, killedBefore)
		}
	}
	other := t.TempDir() + "/privtmux-other"
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	removeSocket(other, "privtmux-other")
	if _, err := os.Lstat(other); err != nil {
		t.Errorf("a plain file named like the server was removed: %v", err)
	}
}
