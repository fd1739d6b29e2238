package zellij

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"fmctl/backends/proc"
)

// zellij's CLI names no process of a pane, but its server starts each
// terminal pane's command with ZELLIJ_PANE_ID=<terminal id> in the
// environment, beside the ZELLIJ_SESSION_NAME the server itself runs with,
// and everything in the pane inherits both. The pane's first process is
// the one carrying the pair whose parent does not: the zellij server.

// zellijPaneEnv is what a pane's processes carry in their environment.
type zellijPaneEnv struct{ session, pane string }

// paneEnvOf reads the zellij pair from one process's environment; ok is
// false when the process is unreadable or carries no pane id.
func paneEnvOf(root string, pid int) (zellijPaneEnv, bool) {
	env, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "environ"))
	if err != nil {
		return zellijPaneEnv{}, false
	}
	var e zellijPaneEnv
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("ZELLIJ_PANE_ID=")); ok {
			e.pane = string(v)
		} else if v, ok := bytes.CutPrefix(kv, []byte("ZELLIJ_SESSION_NAME=")); ok {
			e.session = string(v)
		}
	}
	return e, e.pane != ""
}

// errNoPaneProcess is a pane whose command the server has not started yet
// (or that has none left): worth a short wait, unlike an ambiguity.
var errNoPaneProcess = errors.New("no process carries it")

// findZellijPaneProcess returns the first process of session's pane: the
// one process of this user whose environment names the pane and whose
// parent's does not. Two such processes (two servers of one session name
// under different socket directories) make the answer ambiguous, and
// ambiguity is an error: a wrong pid would let another pane's process act
// as this task.
func findZellijPaneProcess(root, session, pane string) (int, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, fmt.Errorf("list processes: %w", err)
	}
	want := zellijPaneEnv{session: session, pane: pane}
	procs := proc.FS{Root: root}
	found := 0
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid <= 1 {
			continue
		}
		if e, ok := paneEnvOf(root, pid); !ok || e != want {
			continue
		}
		ppid, err := procs.ParentPID(pid)
		if err != nil {
			continue
		}
		if e, ok := paneEnvOf(root, ppid); ok && e == want {
			continue // inherited: a process inside the pane, not its first
		}
		if found != 0 {
			return 0, fmt.Errorf("zellij pane %s:%s has two first processes (%d and %d)", session, pane, found, pid)
		}
		found = pid
	}
	if found == 0 {
		return 0, fmt.Errorf("zellij pane %s:%s: %w", session, pane, errNoPaneProcess)
	}
	return found, nil
}

// panePID allows the server a moment to start the new pane's command after
// list-panes shows the pane (the server spawns it, exec included, before the
// pane is drawn, so a miss is rare and short).
func (z *Adapter) panePID(ctx context.Context, session, pane string) (int, error) {
	var err error
	for i := 0; i < 3; i++ {
		var pid int
		if pid, err = findZellijPaneProcess(z.o.ProcRoot, session, pane); !errors.Is(err, errNoPaneProcess) {
			return pid, err
		}
		if serr := z.sleep(ctx, 50*time.Millisecond); serr != nil {
			return 0, serr
		}
	}
	return 0, err
}
