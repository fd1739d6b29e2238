package tmux

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/backends/proc"
	"fmctl/state"
)

// fleetServer is a tmux server of panes, each in its own window of session
// fmses running claude, that answers list-panes -a, the single lookups and
// chains of list-panes, display and capture-pane as tmux 3.3a does: a
// display of an absent pane prints its format against no pane, a capture
// of one fails and ends the chain. Each pane's screen is one row. A pane
// in vanish is in the snapshot, its shell in the foreground, and gone by
// the time it is captured. When hang is set, every chain times out. Pane
// %N's shell is pid 1000+N (fleetOf's processes).
type fleetServer struct {
	mu     sync.Mutex
	panes  []string // pane ids; pane %N is window fm-tN
	gone   map[string]bool
	vanish map[string]bool
	idle   map[string]bool // its shell in the foreground
	hang   bool
	calls  [][]string
}

func (s *fleetServer) Run(_ context.Context, c backends.Cmd) (backends.Output, error) {
	args := subcommand(c)
	s.mu.Lock()
	s.calls = append(s.calls, args)
	s.mu.Unlock()
	var out strings.Builder
	switch args[0] {
	case "list-panes":
		if !slices.Contains(args, ";") {
			for _, id := range s.panes {
				switch {
				case s.vanish[id], s.idle[id]:
					out.WriteString(fleetPane(id, "bash", false) + "\n")
				case !s.gone[id]:
					out.WriteString(fleetPane(id, "claude", false) + "\n")
				}
			}
			return backends.Output{Stdout: []byte(out.String())}, nil
		}
	case "list-windows":
		return backends.Output{}, nil
	}
	if s.hang {
		return backends.Output{}, &backends.TimeoutError{Call: "tmux display", After: time.Second}
	}
	geometry := strings.NewReplacer("#{pane_height}", "1", "#{cursor_y}", "1", "#{cursor_x}", "2")
	for _, cmd := range splitChain(args) {
		id, format := chainTarget(cmd)
		present := id != "" && !s.gone[id] && !s.vanish[id] && strings.HasPrefix(id, "%")
		switch {
		case cmd[0] == "list-panes":
			geo, lean, listing := strings.Cut(format, "\t")
			for _, p := range s.panes {
				if !s.gone[p] && !s.vanish[p] {
					out.WriteString(geometry.Replace(strings.ReplaceAll(geo, "#D", p)))
					if listing && lean == leanSnapshotFormat {
						out.WriteString("\t" + fleetPane(p, "claude", true))
					}
					out.WriteString("\n")
				}
			}
		case cmd[0] == "capture-pane" && !present:
			return backends.Output{Stdout: []byte(out.String()), ExitCode: 1}, &backends.RunError{Cmd: c, ExitCode: 1, Stderr: "can't find pane: " + id}
		case cmd[0] == "capture-pane":
			out.WriteString("row of " + id + "\n")
		case !present:
			out.WriteString(strings.NewReplacer("#D", "", "#{cursor_y}", "", "#{cursor_x}", "").Replace(format) + "\n")
		case format == paneFormat:
			_, line, _ := strings.Cut(fleetPane(id, "claude", false), "\t")
			out.WriteString(line + "\n")
		default:
			out.WriteString(geometry.Replace(strings.ReplaceAll(format, "#D", id)) + "\n")
		}
	}
	return backends.Output{Stdout: []byte(out.String())}, nil
}

// splitChain cuts a tmux command line at its ";" words.
func splitChain(args []string) [][]string {
	var cmds [][]string
	var cur []string
	for _, a := range args {
		if a == ";" {
			cmds, cur = append(cmds, cur), nil
			continue
		}
		cur = append(cur, a)
	}
	return append(cmds, cur)
}

// chainTarget is a display's or capture-pane's target and its last word.
func chainTarget(cmd []string) (target, last string) {
	for i, w := range cmd {
		switch {
		case strings.HasPrefix(w, "-pt"):
			target = w[3:]
		case w == "-t" && i+1 < len(cmd):
			target = cmd[i+1]
		}
	}
	return target, cmd[len(cmd)-1]
}

// captureCalls counts the calls that capture more than one pane, and
// those that capture one.
func (s *fleetServer) captureCalls() (batched, single int) {
	for _, c := range s.calls {
		switch n := strings.Count(strings.Join(c, " "), "capture-pane"); {
		case n > 1:
			batched++
		case n == 1:
			single++
		}
	}
	return batched, single
}

// fleetPane is pane %N of a fleetServer as the snapshot lists it, lean
// or full, its shell pid 1000+N.
func fleetPane(id, command string, lean bool) string {
	n := id[1:]
	path := "/w/fm-t" + n
	if lean {
		command, path = "", ""
	}
	return fmt.Sprintf("1\tfm-t%s\t%s\t%d\t\t%s\t@%s\tfmses\t0\t900:1700000000\t%s", n, id, fleetShell(id), command, n, path)
}

// fleetShell is the pid of pane id's shell.
func fleetShell(id string) int {
	n, _ := strconv.Atoi(id[1:])
	return 1000 + n
}

// fleetOf is a fleetServer of n panes, %0 to %n-1, and an endpoint for
// each recording its pane's id and shell pid; each shell has claude in the
// foreground (pid 5000+N), as /proc shows it.
func fleetOf(n int) (*fleetServer, *Adapter, []backends.Endpoint) {
	s := &fleetServer{gone: map[string]bool{}, vanish: map[string]bool{}, idle: map[string]bool{}}
	procs := &fixedProcs{byPID: map[int]proc.Process{}}
	var eps []backends.Endpoint
	for i := range n {
		id := fmt.Sprintf("%%%d", i)
		s.panes = append(s.panes, id)
		shell, agent := fleetShell(id), 5000+i
		procs.byPID[shell] = proc.Process{PID: shell, PGID: shell, TPGID: agent, State: 'S', Comm: "bash", Argv: []string{"bash"}}
		procs.byPID[agent] = proc.Process{PID: agent, PGID: agent, TPGID: agent, State: 'S', Comm: "claude", Argv: []string{"claude"}}
		eps = append(eps, backends.Endpoint{Target: fmt.Sprintf("fmses:fm-t%d", i), Fields: map[string]string{state.KeyTmuxPane: id, state.KeyTmuxPanePID: strconv.Itoa(shell)}})
	}
	return s, New(s, Options{Procs: procs}), eps
}

// shellInFront puts pane id's shell in its terminal's foreground, as /proc
// shows it.
func shellInFront(tm *Adapter, id string) {
	procs := tm.o.Procs.(*fixedProcs)
	shell := procs.byPID[fleetShell(id)]
	shell.TPGID = shell.PGID
	procs.byPID[shell.PID] = shell
}

// 500 panes take 1 call: the listing and the captures, while /proc shows
// claude leading each pane's terminal; each screen is its own pane's.
func TestAgentStatesAndCapturesReadsFiveHundredInOneCall(t *testing.T) {
	s, tm, eps := fleetOf(500)
	obs, screens, errs := tm.AgentStatesAndCaptures(context.Background(), eps)
	if batched, single := s.captureCalls(); len(s.calls) != 1 || batched != 1 || single != 0 {
		t.Fatalf("%d calls, %d batched and %d single captures; want 1 batch that lists too", len(s.calls), batched, single)
	}
	for i := range eps {
		want := fmt.Sprintf("row of %%%d", i)
		if obs[i].State != backends.StateAlive || obs[i].AgentPID != 5000+i || errs[i] != nil || strings.Join(screens[i].Lines, "|") != want || screens[i].CursorY != 1 || screens[i].CursorX != 2 {
			t.Fatalf("endpoint %d: %+v, screen %+v, err %v; want alive (agent %d), %q at 1,2", i, obs[i], screens[i], errs[i], 5000+i, want)
		}
	}
}

// Where /proc shows no agent leading the terminal, the full snapshot
// decides, as AgentStates does: its pane_current_command and
// pane_current_path, one call more for all such panes.
func TestAgentStatesAndCapturesLeavesWhatProcCannotTellToTheFullSnapshot(t *testing.T) {
	s, tm, eps := fleetOf(4)
	tm.o.Procs = &fixedProcs{}
	obs, screens, errs := tm.AgentStatesAndCaptures(context.Background(), eps)
	if len(s.calls) != 2 || s.calls[1][0] != "list-panes" || slices.Contains(s.calls[1], ";") {
		t.Fatalf("calls = %q, want the batch, then the full snapshot", s.calls)
	}
	for i := range eps {
		if obs[i].State != backends.StateAlive || obs[i].CurrentPath != fmt.Sprintf("/w/fm-t%d", i) || errs[i] != nil || len(screens[i].Lines) != 1 {
			t.Errorf("endpoint %d: %+v, screen %+v, err %v; want alive by pane_current_command, at its path", i, obs[i], screens[i], errs[i])
		}
	}
}

// The agent read at the recorded pane pid speaks only for a pane the
// listing shows under that pid: a respawned pane's new shell is read.
func TestAgentStatesAndCapturesReadsTheListedShellNotAStaleRecordedOne(t *testing.T) {
	s, tm, eps := fleetOf(3)
	procs := tm.o.Procs.(*fixedProcs)
	procs.byPID[777] = proc.Process{PID: 777, PGID: 777, TPGID: 5001, State: 'S', Comm: "bash", Argv: []string{"bash"}}
	eps[1].Fields[state.KeyTmuxPanePID] = "777"
	s.idle["%1"] = true
	shellInFront(tm, "%1")
	obs, _, _ := tm.AgentStatesAndCaptures(context.Background(), eps)
	if obs[1].State == backends.StateAlive {
		t.Errorf("endpoint 1 read alive (%+v) from the agent under a pid its pane no longer has", obs[1])
	}
	if obs[0].State != backends.StateAlive || obs[2].State != backends.StateAlive {
		t.Errorf("the others: %s and %s, want alive", obs[0].State, obs[2].State)
	}
}

// A recorded pane gone before the snapshot reads as the single lookup
// words it, and is not captured; the others are, in one batch more: the
// first, made beside the snapshot, ends at the pane gone.
func TestAgentStatesAndCapturesLeavesAPaneGoneToItsLookup(t *testing.T) {
	s, tm, eps := fleetOf(6)
	s.gone["%3"] = true
	obs, screens, errs := tm.AgentStatesAndCaptures(context.Background(), eps)
	if want := tm.AgentState(context.Background(), eps[3]); obs[3].State == backends.StateAlive || obs[3].State != want.State || obs[3].Detail != want.Detail || errs[3] == nil {
		t.Errorf("the gone pane reads %+v (err %v), not as AgentState reads it: %+v", obs[3], errs[3], want)
	}
	for _, i := range []int{0, 1, 2, 4, 5} {
		if errs[i] != nil || strings.Join(screens[i].Lines, "|") != fmt.Sprintf("row of %%%d", i) {
			t.Errorf("endpoint %d: screen %+v, err %v", i, screens[i], errs[i])
		}
	}
	if batched, single := s.captureCalls(); batched != 2 || single != 0 {
		t.Errorf("%d batched and %d single captures; want the one that failed and one more", batched, single)
	}
}

// A pane gone between the snapshot and its capture ends its batch's chain:
// the live endpoints of that batch are read again in one batch, not one
// call each.
func TestAgentStatesAndCapturesReadsABatchAgainAroundAPaneGoneMidList(t *testing.T) {
	s, tm, eps := fleetOf(6)
	s.vanish["%3"] = true
	shellInFront(tm, "%3")
	obs, screens, errs := tm.AgentStatesAndCaptures(context.Background(), eps)
	if obs[3].State == backends.StateAlive || errs[3] == nil {
		t.Errorf("the vanished pane: %s, err %v; want not alive and no screen", obs[3].State, errs[3])
	}
	for _, i := range []int{0, 1, 2, 4, 5} {
		if errs[i] != nil || strings.Join(screens[i].Lines, "|") != fmt.Sprintf("row of %%%d", i) {
			t.Errorf("endpoint %d: screen %+v, err %v", i, screens[i], errs[i])
		}
	}
	if batched, single := s.captureCalls(); batched != 2 || single != 0 {
		t.Errorf("%d batched and %d single captures; want the failed batch and one more", batched, single)
	}
}

// An endpoint with no recorded pane id is read once classified, at the
// pane the snapshot finds carrying its label.
func TestAgentStatesAndCapturesReadsAnUnrecordedPaneOnceClassified(t *testing.T) {
	s, tm, eps := fleetOf(3)
	delete(eps[1].Fields, state.KeyTmuxPane)
	_, screens, errs := tm.AgentStatesAndCaptures(context.Background(), eps)
	for i := range eps {
		if errs[i] != nil || strings.Join(screens[i].Lines, "|") != fmt.Sprintf("row of %%%d", i) {
			t.Errorf("endpoint %d: screen %+v, err %v", i, screens[i], errs[i])
		}
	}
	if batched, single := s.captureCalls(); batched != 1 || single != 1 {
		t.Errorf("%d batched and %d single captures; want the recorded panes' batch, then the unrecorded one's", batched, single)
	}
}

// A call that timed out is not made again, nor is any other: tmux is not
// answering, so every endpoint is unreadable, the timeout named.
func TestAgentStatesAndCapturesDoesNotReadAgainAfterATimeout(t *testing.T) {
	s, tm, eps := fleetOf(3)
	s.hang = true
	obs, _, errs := tm.AgentStatesAndCaptures(context.Background(), eps)
	for i := range eps {
		if obs[i].State != backends.StateUnreadable || !strings.Contains(obs[i].Detail, "timed out") || !errors.As(errs[i], new(*backends.TimeoutError)) {
			t.Errorf("endpoint %d: %+v, err %v; want unreadable, the timeout named, the screen unread", i, obs[i], errs[i])
		}
	}
	if len(s.calls) != 1 {
		t.Errorf("calls = %q; want the one that timed out", s.calls)
	}
}
