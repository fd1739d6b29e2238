package tmux

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"fmctl/backends"
	"fmctl/backends/proc"
	"fmctl/harness"
	"fmctl/state"
)

// Markers the gated key's branches print first, so fmctl knows which ran.
const (
	gateSent    = "fmctl-key-sent"
	gateRefused = "fmctl-key-refused"
)

// SendKeyGated sends a key only to the agent the gate accepts, in one tmux
// call when the record names the pane's ids and its shell's pid: the agent
// under that pid is read from /proc (the foreground fast path, which only
// ever proves an agent alive), the gate judges it, and one `if-shell -F`
// has the server check, in the same command queue that then types the key,
// that the pane is still the recorded one: its pane and window ids, its
// session and window name (the label), its shell's pid, and not dead. A
// pane that fails the check gets no key and prints the refused marker, and
// anything the fast path cannot prove takes the full read (AgentState),
// whose observation the gate judges as before, so the refusals and their
// words are the full read's.
func (t *Adapter) SendKeyGated(ctx context.Context, ep backends.Endpoint, key harness.Key, k backends.GatedKey) (backends.GatedResult, error) {
	name, ok := tmuxKeyNames[key]
	if !ok {
		return backends.GatedResult{}, fmt.Errorf("tmux adapter has no mapping for key %s", key)
	}
	if g, ok := gateOf(ep); ok {
		if obs, leader, alive := t.agentUnder(ctx, g.pid); alive && k.Gate(obs) == nil {
			g.command = foregroundName(leader)
			res, sent, err := t.sendIf(ctx, ep, g, name, k)
			if err != nil || sent {
				return res, err
			}
		}
	}
	obs := t.AgentState(ctx, ep)
	if refused := k.Gate(obs); refused != nil {
		return backends.GatedResult{Refused: refused}, nil
	}
	var res backends.GatedResult
	if k.ScreenBefore {
		if s, err := t.Capture(ctx, ep); err == nil {
			res.Before = &s
		}
	}
	if !k.ReadAfter {
		return res, t.SendKey(ctx, ep, key)
	}
	after, err := t.SendKeyThenState(ctx, ep, key)
	if err == nil {
		res.After = &after
	}
	return res, err
}

// paneGate is what the server checks before it takes a gated key.
type paneGate struct {
	session, window, pane, windowID string
	pid                             int
	// server is the recorded pid:start_time of the server, "" for a
	// record written before it was kept.
	server string
	// command is what tmux names the pane's foreground process when the
	// agent leads its own process group (a shell with job control), "" when
	// tmux would name something else (sh -c keeps the agent in its group).
	command string
}

// gateOf reads the gate from the record. Every value goes into a tmux
// format, so each must be a plain atom; a record without the ids and pid
// (written before they were recorded) has none.
func gateOf(ep backends.Endpoint) (paneGate, bool) {
	session, window, err := SplitTarget(ep.Target)
	pane, windowID, pid := ep.Field(state.KeyTmuxPane), ep.Field(state.KeyTmuxWindow), ep.Field(state.KeyTmuxPanePID)
	if err != nil || !backends.ValidAtom(session) || !backends.ValidAtom(window) || !tmuxPaneID(pane) ||
		!tmuxWindowID(windowID) || !backends.ValidPID(pid) {
		return paneGate{}, false
	}
	server := ep.Field(state.KeyTmuxServer)
	if server != "" && !validServer(server) {
		return paneGate{}, false
	}
	n, err := strconv.Atoi(pid)
	return paneGate{session: session, window: window, pane: pane, windowID: windowID, pid: n, server: server}, err == nil
}

// condition is the if-shell -F format that is true only on the recorded,
// live pane.
func (g paneGate) condition() string {
	checks := []string{
		"#{==:#{pane_id}," + g.pane + "}",
		"#{==:#{window_id}," + g.windowID + "}",
		"#{==:#{session_name}," + g.session + "}",
		"#{==:#{window_name}," + g.window + "}",
		"#{==:#{pane_pid}," + strconv.Itoa(g.pid) + "}",
		"#{==:#{pane_dead},0}",
	}
	if serverPID, start, ok := strings.Cut(g.server, ":"); ok {
		checks = append([]string{"#{==:#{pid}," + serverPID + "}", "#{==:#{start_time}," + start + "}"}, checks...)
	}
	if g.command != "" {
		// The agent is still the terminal's foreground when the key goes:
		// a stopped or exited one has handed it back to the shell.
		checks = append(checks[:len(checks)-1], "#{==:#{pane_current_command},"+g.command+"}", checks[len(checks)-1])
	}
	cond := checks[len(checks)-1]
	for i := len(checks) - 2; i >= 0; i-- {
		cond = "#{&&:" + checks[i] + "," + cond + "}"
	}
	return cond
}

// agentUnder is the foreground fast path on a pane's pid: an agent leading
// the terminal's foreground group is alive. Anything else (a shell, a
// stopped agent, a pid gone) proves nothing here.
func (t *Adapter) agentUnder(ctx context.Context, pid int) (backends.Observation, proc.Process, bool) {
	leader, ok := t.foregroundLeader(ctx, pid)
	if !ok {
		return backends.Observation{}, proc.Process{}, false
	}
	name := harness.AgentName(leader.Comm, leader.Argv)
	// AgentPID lets a gate find the agent's own record (its HOME and
	// directory), as AgentState's observation does.
	return backends.Observation{State: backends.StateAlive, Names: []string{name}, Detail: "foreground " + name, AgentPID: leader.PID}, leader, true
}

// foregroundName is #{pane_current_command} while leader is the terminal's
// foreground: tmux reads the cmdline of the process whose pid is the
// foreground group's id and names it as parse_window_name does (leading
// spaces and dashes dropped, cut at a space, the base name of an absolute
// path). It is "" when leader does not lead its group (tmux would then name
// the group's leader, the shell), or when the name is not a plain atom a
// format may compare.
func foregroundName(leader proc.Process) string {
	if leader.PID != leader.PGID || len(leader.Argv) == 0 {
		return ""
	}
	name := strings.TrimLeft(leader.Argv[0], " -")
	name, _, _ = strings.Cut(name, " ")
	if strings.HasPrefix(name, "/") {
		name = path.Base(name)
	}
	if !backends.ValidAtom(name) {
		return ""
	}
	return name
}

// sendIf is the one tmux call: the gated key, with the screen captured
// right before it and the pane's line read right after it when asked.
// sent is false only when the server refused the key.
func (t *Adapter) sendIf(ctx context.Context, ep backends.Endpoint, g paneGate, name string, k backends.GatedKey) (res backends.GatedResult, sent bool, err error) {
	then := "display-message -p " + gateSent + " ; "
	if k.ScreenBefore {
		then += `display-message -p -t ` + g.pane + ` "#{cursor_y} #{cursor_x}" ; capture-pane -p -t ` + g.pane + " ; "
	}
	args := []string{"if-shell", "-F", "-t", g.pane, g.condition(), then + "send-keys -t " + g.pane + " " + name, "display-message -p " + gateRefused}
	if k.ReadAfter {
		args = append(args, ";", "display-message", "-p", "-t", g.pane, paneFormat)
	}
	out, err := t.run(ctx, args...)
	if err != nil {
		return res, false, fmt.Errorf("tmux send-keys %s to %s (%s): %w", name, ep.Target, g.pane, err)
	}
	marker, rest, _ := strings.Cut(string(out.Stdout), "\n")
	switch marker {
	case gateRefused:
		return res, false, nil
	case gateSent:
	default:
		return res, false, fmt.Errorf("tmux send-keys %s to %s (%s): the gated call printed %q, so whether the key went is unknown", name, ep.Target, g.pane, marker)
	}
	t.remember(ep.Target, g.pane)
	// The pane line read after the key is the last line; the screen, when
	// captured, is everything between.
	screen, line := rest, ""
	if k.ReadAfter {
		rest = strings.TrimSuffix(rest, "\n")
		if i := strings.LastIndexByte(rest, '\n'); i >= 0 {
			screen, line = rest[:i+1], rest[i+1:]
		} else {
			screen, line = "", rest
		}
		obs := t.stateAfter(ctx, ep, g.pane, line)
		res.After = &obs
	}
	if k.ScreenBefore {
		s := parseCapture([]byte(screen))
		res.Before = &s
	}
	return res, true, nil
}
