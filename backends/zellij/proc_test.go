package zellij

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeProc writes one process into a /proc stand-in: its stat line (only
// the parent matters here) and its environment.
func fakeProc(t *testing.T, root string, pid, ppid int, env ...string) {
	t.Helper()
	dir := filepath.Join(root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := strconv.Itoa(pid) + " (proc) S " + strconv.Itoa(ppid) + " 1 1 0 -1 0\n"
	environ := strings.Join(append(env, "HOME=/h"), "\x00") + "\x00"
	for name, data := range map[string]string{"stat": stat, "environ": environ} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestZellijPaneProcessIsTheFirstCarrierOfThePanesEnvironment(t *testing.T) {
	root := t.TempDir()
	fakeProc(t, root, 100, 1, "ZELLIJ_SESSION_NAME=fm", "ZELLIJ=0")            // the server
	fakeProc(t, root, 200, 100, "ZELLIJ_SESSION_NAME=fm", "ZELLIJ_PANE_ID=3")  // pane 3's shell
	fakeProc(t, root, 300, 200, "ZELLIJ_SESSION_NAME=fm", "ZELLIJ_PANE_ID=3")  // the agent in it
	fakeProc(t, root, 210, 100, "ZELLIJ_SESSION_NAME=fm", "ZELLIJ_PANE_ID=4")  // another pane
	fakeProc(t, root, 220, 1, "ZELLIJ_SESSION_NAME=other", "ZELLIJ_PANE_ID=3") // another session's pane 3
	if err := os.WriteFile(filepath.Join(root, "uptime"), []byte("1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := findZellijPaneProcess(root, "fm", "3")
	if err != nil || got != 200 {
		t.Fatalf("pane fm:3 = %d, %v; want its shell 200", got, err)
	}
	if got, err := findZellijPaneProcess(root, "fm", "4"); err != nil || got != 210 {
		t.Fatalf("pane fm:4 = %d, %v; want 210", got, err)
	}
	if _, err := findZellijPaneProcess(root, "fm", "9"); !errors.Is(err, errNoPaneProcess) {
		t.Fatalf("a pane without a process: %v, want errNoPaneProcess", err)
	}

	// A second server of the same session name (another socket directory)
	// makes the answer ambiguous: no pid rather than a guess.
	fakeProc(t, root, 500, 1, "ZELLIJ_SESSION_NAME=fm", "ZELLIJ_PANE_ID=3")
	if got, err := findZellijPaneProcess(root, "fm", "3"); err == nil || errors.Is(err, errNoPaneProcess) {
		t.Fatalf("two first processes gave %d, %v; want an ambiguity error", got, err)
	}
}
