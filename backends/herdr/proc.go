package herdr

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"fmctl/backends"
	"fmctl/backends/proc"
	"fmctl/harness"
)

// herdrTurns reads herdr's agent_status (src/api/schema/agents.rs
// AgentStatus: idle, working, blocked, done, unknown). done is a finished
// turn the user has not looked at yet, so no turn runs; unknown, or a word
// herdr does not have, is no reading at all.
var herdrTurns = map[string]backends.Turn{"working": backends.TurnWorking, "blocked": backends.TurnBlocked, "idle": backends.TurnIdle, "done": backends.TurnIdle}

// Turn reads the agent's agent_status with one `agent get`. An answer about
// another pane (herdr also resolves agent names) is no reading.
func (h *Adapter) Turn(ctx context.Context, ep backends.Endpoint) backends.Turn {
	session, pane, err := SplitTarget(ep.Target)
	if err != nil {
		return backends.TurnUnknown
	}
	out, err := h.run(ctx, session, "agent get", pane)
	if err != nil {
		return backends.TurnUnknown
	}
	res, err := decodeHerdr(out)
	if err != nil || res.Agent == nil || res.Agent.PaneID != pane {
		return backends.TurnUnknown
	}
	return herdrTurns[res.Agent.AgentStatus]
}

// herdrProcessInfo is the part of herdr's PaneProcessInfo fmctl reads: the
// pane's shell and its terminal's foreground job, read by herdr from the
// process table. It carries pids and names, never a process state.
type herdrProcessInfo struct {
	PaneID     string `json:"pane_id"`
	ShellPID   int    `json:"shell_pid"`
	Foreground []struct {
		PID   int      `json:"pid"`
		Name  string   `json:"name"`
		Argv0 string   `json:"argv0"`
		Argv  []string `json:"argv"`
	} `json:"foreground_processes"`
}

// processInfo runs `pane process-info --pane P` (in herdr since 0.7.0).
func (h *Adapter) processInfo(ctx context.Context, session, pane string) (herdrProcessInfo, error) {
	out, err := h.run(ctx, session, "pane process-info", "--pane", pane)
	if err != nil {
		return herdrProcessInfo{}, fmt.Errorf("herdr pane process-info %s: %w", pane, err)
	}
	var resp struct {
		Result *struct {
			ProcessInfo *herdrProcessInfo `json:"process_info"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out.Stdout, &resp); err != nil || resp.Result == nil || resp.Result.ProcessInfo == nil {
		return herdrProcessInfo{}, fmt.Errorf("herdr pane process-info %s: unreadable response %q", pane, strings.TrimSpace(string(out.Stdout)))
	}
	if info := *resp.Result.ProcessInfo; info.PaneID == pane {
		return info, nil
	}
	return herdrProcessInfo{}, fmt.Errorf("herdr pane process-info %s answered for another pane", pane)
}

// verifyForeground checks herdr's agent registration against the pane's
// foreground job: an agent stopped with Ctrl-Z, or one that exited into a
// nested shell, can stay registered (firstmate measured the latter on
// 0.9.0), and keys typed then would reach a frozen worker or a shell. When
// herdr cannot name the foreground job, its registration stands.
func (h *Adapter) verifyForeground(ctx context.Context, session, pane string, alive backends.Observation) backends.Observation {
	info, err := h.processInfo(ctx, session, pane)
	if err != nil || len(info.Foreground) == 0 {
		return alive
	}
	var shells, others []string
	for _, p := range info.Foreground {
		comm := p.Name
		if p.Argv0 != "" {
			comm = p.Argv0
		}
		switch harness.ClassifyArgv(comm, p.Argv) {
		case harness.ProcessAgent:
			return alive
		case harness.ProcessShell:
			shells = append(shells, p.Name)
		default:
			others = append(others, p.Name)
		}
	}
	detail := fmt.Sprintf("herdr registers agent %s (%s), but the pane's foreground is %s", strings.Join(alive.Names, ","), alive.AgentStatus, strings.Join(append(shells, others...), ","))
	if len(others) > 0 {
		return backends.Observation{State: backends.StateUnattributed, Names: others, CurrentPath: alive.CurrentPath, Detail: detail}
	}
	obs := h.stoppedUnder(ctx, info, backends.Observation{State: backends.StateDead, Names: shells, CurrentPath: alive.CurrentPath, Detail: detail})
	if obs.State == backends.StateDead && info.ShellPID <= 0 {
		// Without the shell's pid a stopped agent cannot be ruled out, and a
		// false dead could launch a second agent onto the worktree.
		return backends.Observation{State: backends.StateUnreadable, CurrentPath: alive.CurrentPath, Detail: detail + ", and herdr gave no shell pid to look for a stopped agent under"}
	}
	return obs
}

// deadOrSuspended refines herdr's "no agent here": a harness stopped with
// Ctrl-Z leaves the foreground to the shell, so herdr forgets it, yet it is
// a frozen worker, not a free pane. A pane herdr runs no process in (no
// shell pid) has nothing stopped in it either.
func (h *Adapter) deadOrSuspended(ctx context.Context, session, pane string, dead backends.Observation) backends.Observation {
	info, err := h.processInfo(ctx, session, pane)
	if err != nil {
		return backends.Observation{State: backends.StateUnreadable, CurrentPath: dead.CurrentPath,
			Detail: fmt.Sprintf("%s, but a stopped agent cannot be ruled out: %v", dead.Detail, err)}
	}
	return h.stoppedUnder(ctx, info, dead)
}

// stoppedUnder looks for a stopped agent among the pane shell's descendants
// in the local process table (herdr's socket is local, so are its pids); it
// returns otherwise unchanged, or unreadable when the table cannot be read.
func (h *Adapter) stoppedUnder(ctx context.Context, info herdrProcessInfo, otherwise backends.Observation) backends.Observation {
	if info.ShellPID <= 0 {
		return otherwise
	}
	unreadable := func(format string, args ...any) backends.Observation {
		return backends.Observation{State: backends.StateUnreadable, CurrentPath: otherwise.CurrentPath, Detail: otherwise.Detail + "; " + fmt.Sprintf(format, args...)}
	}
	queue, seen := []int{info.ShellPID}, 0
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen++; seen > proc.MaxTree {
			return unreadable("the shell %d has more than %d descendants to look for a stopped agent in", info.ShellPID, proc.MaxTree)
		}
		p, err := h.o.Procs.Process(ctx, pid)
		if err != nil {
			if pid != info.ShellPID {
				continue // it exited while we looked
			}
			return unreadable("herdr's shell pid %d cannot be read here (%v), so a stopped agent cannot be ruled out", pid, err)
		}
		if name := harness.AgentName(p.Comm, p.Argv); name != "" && (p.State == 'T' || p.State == 't') {
			return backends.Observation{State: backends.StateSuspended, Names: []string{name}, CurrentPath: otherwise.CurrentPath, Detail: fmt.Sprintf("stopped %s (pid %d)", name, p.PID)}
		}
		kids, err := h.o.Procs.Children(ctx, pid)
		if err != nil && pid == info.ShellPID {
			return unreadable("%v, so a stopped agent cannot be ruled out", err)
		}
		queue = append(queue, kids...)
	}
	return otherwise
}
