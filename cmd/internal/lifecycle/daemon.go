package lifecycle

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"fmctl/backends/proc"
	"fmctl/cmd/internal/task"
)

// Leftover is a process of the agent's that outlived its exit by design:
// the harness's daemon, which the task's agent started.
type Leftover struct {
	Name string // the harness's name for it (cline's "hub")
	PID  int
}

// String is the outcome's left= value.
func (l Leftover) String() string { return fmt.Sprintf("%s:%d", l.Name, l.PID) }

// agentDaemons lists the harness's daemon processes under the agent's
// process pid, read from the local process table before the exit: once
// the agent is gone the daemon's parent is init, and nothing ties it to
// this task any more. Remote tasks are stopped by fm-control on their
// own host, so the table read is always the agent's own. The whole table
// is read for parents, since a process's children file lists only what
// its main thread started.
func agentDaemons(ctx context.Context, t *task.Target, pid int) []Leftover {
	d := t.Harness.Daemon
	if d == nil || pid <= 0 {
		return nil
	}
	procs := proc.FS{Root: "/proc"}
	entries, err := os.ReadDir(procs.Root)
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	for _, e := range entries {
		if p, err := strconv.Atoi(e.Name()); err == nil {
			if pp, err := procs.ParentPID(p); err == nil {
				parent[p] = pp
			}
		}
	}
	var found []Leftover
	for p := range parent {
		if !descends(parent, p, pid) {
			continue
		}
		if pr, err := procs.Process(ctx, p); err == nil && isDaemon(pr, d.Arg) {
			found = append(found, Leftover{Name: d.Name, PID: p})
		}
	}
	// A daemon's own child still carries its argv between its fork and
	// its exec: it is part of that daemon, not one more (seen as a flaky
	// hub:<pid>,hub:<pid> in the lifecycle tests).
	all := slices.Clone(found)
	found = slices.DeleteFunc(found, func(l Leftover) bool {
		return slices.ContainsFunc(all, func(d Leftover) bool { return descends(parent, l.PID, d.PID) })
	})
	slices.SortFunc(found, func(a, b Leftover) int { return a.PID - b.PID })
	return found
}

// descends reports whether p is below root in the parent map; the walk is
// bounded by the map's size, so a cycle read mid-change cannot trap it.
func descends(parent map[int]int, p, root int) bool {
	for range len(parent) {
		pp, ok := parent[p]
		if !ok || pp <= 1 {
			return false
		}
		if pp == root {
			return true
		}
		p = pp
	}
	return false
}

func isDaemon(p proc.Process, arg string) bool {
	return !p.Exited() && slices.ContainsFunc(p.Argv, func(a string) bool { return a == arg || strings.HasPrefix(a, arg+"=") })
}

// daemonsLeft keeps the daemons that still run as what they were.
func daemonsLeft(ctx context.Context, t *task.Target, daemons []Leftover) []Leftover {
	var left []Leftover
	procs := proc.FS{Root: "/proc"}
	for _, l := range daemons {
		if p, err := procs.Process(ctx, l.PID); err == nil && isDaemon(p, t.Harness.Daemon.Arg) {
			left = append(left, l)
		}
	}
	return left
}

// LeftValue is the outcome's left= value ("" when nothing was left).
func (s Stopped) LeftValue() string {
	names := make([]string, len(s.Left))
	for i, l := range s.Left {
		names[i] = l.String()
	}
	return strings.Join(names, ",")
}

// LeftNotice says what was left running and why exit left it, or "".
func (s Stopped) LeftNotice(t *task.Target) string {
	if len(s.Left) == 0 {
		return ""
	}
	pids := make([]string, len(s.Left))
	for i, l := range s.Left {
		pids[i] = fmt.Sprint(l.PID)
	}
	return fmt.Sprintf("task %s's %s agent is gone, but the %s it started runs on (pid %s): %s keeps it for every %s of this HOME, so exit leaves it; once none runs there, 'kill %s' ends it (%s)",
		t.ID, t.Harness.Name, s.Left[0].Name, strings.Join(pids, ", "), t.Harness.Name, t.Harness.Name, strings.Join(pids, " "), t.Harness.Daemon.Source)
}
