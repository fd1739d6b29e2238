package tmux

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/state"
)

// fleetServer is a tmux server of panes, each in its own window of session
// fmses running claude, that answers list-panes -a, the single lookups and
// chains of list-panes, display and capture-pane as tmux 3.3a does: a
// display of an absent pane prints its format against no pane, a capture
// of one fails and ends the chain. Each pane's screen is one row. A pane
// in vanish is in the snapshot, its shell in the foreground, and gone by
// the time it is captured. When hang is set, every chain times out.
type fleetServer struct {
	mu     sync.Mutex
	panes  []string // pane ids; pane %N is window fm-tN
	gone   map[string]bool
	vanish map[string]bool
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
				case s.vanish[id]:
					out.WriteString(pane("fmses", true, "fm-t"+id[1:], id, "bash"))
				case !s.gone[id]:
					out.WriteString(pane("fmses", true, "fm-t"+id[1:], id, "claude"))
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
			for _, p := range s.panes {
				if !s.gone[p] && !s.vanish[p] {
					out.WriteString(geometry.Replace(strings.ReplaceAll(format, "#D", p)) + "\n")
				}
			}
		case cmd[0] == "capture-pane" && !present:
			return backends.Output{Stdout: []byte(out.String()), ExitCode: 1}, &backends.RunError{Cmd: c, ExitCode: 1, Stderr: "can't find pane: " + id}
		case cmd[0] == "capture-pane":
			out.WriteString("row of " + id + "\n")
		case !present:
			out.WriteString(strings.NewReplacer("#D", "", "#{cursor_y}", "", "#{cursor_x}", "").Replace(format) + "\n")
		case format == paneFormat:
			_, line, _ := strings.Cut(pane("fmses", true, "fm-t"+id[1:], id, "claude"), "\t")
			out.WriteString(line)
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

// fleetOf is a fleetServer of n panes, %0 to %n-1, and an endpoint for
// each recording its pane's id.
func fleetOf(n int) (*fleetServer, *Adapter, []backends.Endpoint) {
	s := &fleetServer{gone: map[string]bool{}, vanish: map[string]bool{}}
	var eps []backends.Endpoint
	for i := range n {
		id := fmt.Sprintf("%%%d", i)
		s.panes = append(s.panes, id)
		eps = append(eps, backends.Endpoint{Target: fmt.Sprintf("fmses:fm-t%d", i), Fields: map[string]string{state.KeyTmuxPane: id}})
	}
	return s, New(s, Options{Procs: &fixedProcs{}}), eps
}

// 500 panes take the snapshot and 1 batched capture, made beside it, and
// each screen is its own pane's.
func TestAgentStatesAndCapturesReadsFiveHundredInTwoCalls(t *testing.T) {
	s, tm, eps := fleetOf(500)
	obs, screens, errs := tm.AgentStatesAndCaptures(context.Background(), eps)
	if batched, single := s.captureCalls(); len(s.calls) != 2 || batched != 1 || single != 0 {
		t.Fatalf("%d calls, %d batched and %d single captures; want the snapshot and 1 batch", len(s.calls), batched, single)
	}
	for i := range eps {
		want := fmt.Sprintf("row of %%%d", i)
		if obs[i].State != backends.StateAlive || errs[i] != nil || strings.Join(screens[i].Lines, "|") != want || screens[i].CursorY != 1 || screens[i].CursorX != 2 {
			t.Fatalf("endpoint %d: %s, screen %+v, err %v; want alive, %q at 1,2", i, obs[i].State, screens[i], errs[i], want)
		}
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

// A capture that timed out is not made again: tmux is not answering.
func TestAgentStatesAndCapturesDoesNotReadAgainAfterATimeout(t *testing.T) {
	s, tm, eps := fleetOf(3)
	s.hang = true
	obs, _, errs := tm.AgentStatesAndCaptures(context.Background(), eps)
	for i := range eps {
		if obs[i].State != backends.StateAlive || !errors.As(errs[i], new(*backends.TimeoutError)) {
			t.Errorf("endpoint %d: %s, err %v; want alive from the snapshot, the screen unread", i, obs[i].State, errs[i])
		}
	}
	if batched, single := s.captureCalls(); batched != 1 || single != 0 {
		t.Errorf("%d batched and %d single captures; want the one that timed out", batched, single)
	}
}
