package proc

import (
	"fmt"
	"strings"

	"fmctl/backends"
	"fmctl/harness"
)

// ClassifyPane decides a pane's agent state from its terminal's processes and
// tmux's pane_current_command. Either source naming a harness is enough for
// alive: a false "dead" could launch a second agent onto a live worktree,
// while a false "alive" only refuses.
func ClassifyPane(procs []Process, procErr error, currentCommand string) backends.Observation {
	var fg, fgAgents, fgOther []string
	var stoppedAgent, lingeringAgent string
	agentPID := 0
	for _, p := range procs {
		if p.Exited() {
			// A killed agent whose parent died too stays a zombie on the
			// terminal until init reaps it: it is not an agent there.
			continue
		}
		// Names carry the agent name that classified (argv[0] or an
		// interpreter's script), so a gate can tell whose agent it is.
		agent := harness.AgentName(p.Comm, p.Argv)
		if p.Foreground() {
			fg = append(fg, p.Comm)
			switch {
			case agent != "":
				fgAgents = append(fgAgents, agent)
				if agentPID == 0 {
					agentPID = p.PID
				}
			case harness.ClassifyProcess(p.Comm) == harness.ProcessOther:
				fgOther = append(fgOther, p.Comm)
			}
		} else if agent != "" && (p.State == 'T' || p.State == 't') {
			stoppedAgent = agent
		} else if agent != "" {
			// An agent whose launcher already gave the terminal back to
			// the shell can still be ending in its own group (opencode
			// prints its exit trace there): the pane is not agent-free
			// until it is gone, or a relaunch would type over it.
			lingeringAgent = agent
		}
	}
	cur := harness.ClassifyProcess(currentCommand)
	switch {
	case len(fgAgents) > 0:
		return backends.Observation{State: backends.StateAlive, Names: fgAgents, Detail: "foreground " + strings.Join(fgAgents, ","), AgentPID: agentPID}
	case cur == harness.ProcessAgent:
		return backends.Observation{State: backends.StateAlive, Names: []string{currentCommand}, Detail: "pane_current_command " + currentCommand}
	}
	if len(fg) > 0 {
		if len(fgOther) > 0 {
			return backends.Observation{State: backends.StateUnattributed, Names: fgOther, Detail: "foreground " + strings.Join(fgOther, ",")}
		}
		if stoppedAgent != "" {
			return backends.Observation{State: backends.StateSuspended, Names: []string{stoppedAgent}, Detail: "stopped " + stoppedAgent}
		}
		if lingeringAgent != "" {
			return lingering(lingeringAgent)
		}
		return backends.Observation{State: backends.StateDead, Names: fg, Detail: "only shell " + strings.Join(fg, ",")}
	}
	// No foreground group could be read: pane_current_command decides alone.
	switch {
	case currentCommand == "":
		detail := "no foreground process and no pane_current_command"
		if procErr != nil {
			detail = fmt.Sprintf("%s (%v)", detail, procErr)
		}
		return backends.Observation{State: backends.StateUnreadable, Detail: detail}
	case cur == harness.ProcessShell:
		if stoppedAgent != "" {
			return backends.Observation{State: backends.StateSuspended, Names: []string{stoppedAgent}, Detail: "stopped " + stoppedAgent}
		}
		if lingeringAgent != "" {
			return lingering(lingeringAgent)
		}
		return backends.Observation{State: backends.StateDead, Names: []string{currentCommand}, Detail: "pane_current_command " + currentCommand}
	default:
		return backends.Observation{State: backends.StateUnattributed, Names: []string{currentCommand}, Detail: "pane_current_command " + currentCommand}
	}
}

// lingering is a pane whose shell has the terminal while an agent process
// still runs on it outside the foreground: neither alive (it takes no
// keys) nor agent-free.
func lingering(agent string) backends.Observation {
	return backends.Observation{State: backends.StateUnattributed, Names: []string{agent}, Detail: "agent " + agent + " still running outside the foreground"}
}
