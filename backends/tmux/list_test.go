package tmux

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/state"
)

// paneServer answers list-panes -a with a fixed snapshot and list-windows
// (the single-endpoint read) with nothing, counting every call.
type paneServer struct {
	panes   string
	listErr string
	calls   []string
}

func (s *paneServer) Run(_ context.Context, c backends.Cmd) (backends.Output, error) {
	args := subcommand(c)
	s.calls = append(s.calls, strings.Join(args, " "))
	switch {
	case args[0] == "list-panes" && s.listErr != "":
		return backends.Output{ExitCode: 1}, &backends.RunError{Cmd: c, ExitCode: 1, Stderr: s.listErr}
	case args[0] == "list-panes":
		return backends.Output{Stdout: []byte(s.panes)}, nil
	case args[0] == "capture-pane":
		return backends.Output{Stdout: []byte("one\ntwo\nthree\n\n  \n")}, nil
	}
	return backends.Output{}, nil
}

func pane(session string, active bool, window, id, cmd string) string {
	a := "0"
	if active {
		a = "1"
	}
	// active, then paneFormat: window, pane, pid, tty, command, window id, session, dead, path
	return fmt.Sprintf("%s\t%s\t%s\t0\t\t%s\t@%s\t%s\t0\t900:1700000000\t/w/%s\n", a, window, id, cmd, id[1:], session, window)
}

func TestAgentStatesReadsTwentyEndpointsInOneCall(t *testing.T) {
	var snap strings.Builder
	var eps []backends.Endpoint
	for i := 0; i < 20; i++ {
		cmd := "claude"
		if i%2 == 1 {
			cmd = "bash"
		}
		snap.WriteString(pane("fmses", true, fmt.Sprintf("fm-t%d", i), fmt.Sprintf("%%%d", i), cmd))
		eps = append(eps, backends.Endpoint{Backend: "tmux", Target: fmt.Sprintf("fmses:fm-t%d", i), TaskID: fmt.Sprintf("t%d", i)})
	}
	s := &paneServer{panes: snap.String()}
	tm := New(s, Options{Procs: &fixedProcs{}})
	obs := tm.AgentStates(context.Background(), eps)
	if len(s.calls) != 1 || !strings.HasPrefix(s.calls[0], "list-panes -a -F ") {
		t.Fatalf("calls = %q, want one list-panes -a", s.calls)
	}
	for i, o := range obs {
		want := backends.StateAlive
		if i%2 == 1 {
			want = backends.StateDead
		}
		if o.State != want {
			t.Errorf("endpoint %d: %s, want %s", i, o.State, want)
		}
	}
}

func TestAgentStatesFallsBackToTheSingleReadWhenTheSnapshotIsNotPlain(t *testing.T) {
	snap := pane("fmses", true, "fm-a", "%1", "claude") +
		pane("fmses", true, "fm-dup", "%2", "claude") + pane("fmses", true, "fm-dup", "%3", "claude") +
		pane("fmses", false, "fm-b", "%4", "claude") + pane("other", true, "fm-c", "%5", "claude")
	s := &paneServer{panes: snap}
	tm := New(s, Options{Procs: &fixedProcs{}})
	eps := []backends.Endpoint{{Target: "fmses:fm-a"}, {Target: "fmses:fm-dup"}, {Target: "fmses:fm-b"}, {Target: "fmses:fm-c"}, {Target: "bad"}}
	obs := tm.AgentStates(context.Background(), eps)
	if obs[0].State != backends.StateAlive {
		t.Errorf("fm-a: %s, want alive from the snapshot", obs[0].State)
	}
	// Two panes named fm-dup, an inactive pane only, a window in another
	// session: each asks tmux itself; a malformed target is refused
	// without a call.
	if n := len(s.calls); n != 1+3 {
		t.Errorf("calls = %q, want the snapshot then three single reads", s.calls)
	}
	for i := 1; i < len(obs); i++ {
		if obs[i].State == backends.StateAlive {
			t.Errorf("endpoint %s read alive from a snapshot that does not show it plainly", eps[i].Target)
		}
	}
}

func TestAgentStatesWhenTheListFails(t *testing.T) {
	s := &paneServer{listErr: "no server running on /tmp/tmux-0/x"}
	tm := New(s, Options{Procs: &fixedProcs{}})
	obs := tm.AgentStates(context.Background(), []backends.Endpoint{{Target: "fmses:fm-a"}, {Target: "fmses:fm-b"}})
	if len(obs) != 2 || len(s.calls) != 3 {
		t.Fatalf("obs=%v calls=%q, want each endpoint read on its own after the failed list", obs, s.calls)
	}
	for _, o := range obs {
		if o.State == backends.StateAlive || o.State == "" {
			t.Errorf("state %q after a failed list", o.State)
		}
	}
}

func TestHistoryAsksForScrollbackAndDropsBlankRows(t *testing.T) {
	s := &paneServer{panes: pane("fmses", true, "fm-a", "%7", "claude")}
	tm := New(s, Options{Procs: &fixedProcs{}})
	tm.pane["fmses:fm-a"] = "%7"
	got, err := tm.History(context.Background(), backends.Endpoint{Target: "fmses:fm-a"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "two|three" {
		t.Errorf("lines = %q, want the last two non-blank", got)
	}
	if s.calls[0] != "capture-pane -p -J -S -2 -t %7" {
		t.Errorf("call = %q", s.calls[0])
	}
}

func TestAgentStatesFindsARecordedPaneIDOnlyWhereTheRecordSaysItIs(t *testing.T) {
	snap := pane("fmses", true, "fm-a", "%1", "claude") + pane("fmses", true, "renamed", "%2", "claude")
	s := &paneServer{panes: snap}
	tm := New(s, Options{Procs: &fixedProcs{}})
	eps := []backends.Endpoint{
		{Target: "fmses:fm-a", Fields: map[string]string{state.KeyTmuxPane: "%1"}},
		{Target: "fmses:fm-b", Fields: map[string]string{state.KeyTmuxPane: "%2"}}, // its pane was renamed
	}
	obs := tm.AgentStates(context.Background(), eps)
	if obs[0].State != backends.StateAlive {
		t.Errorf("recorded pane in place: %s, want alive", obs[0].State)
	}
	if len(s.calls) < 2 || !strings.HasPrefix(s.calls[1], "display-message -p -t %2 ") {
		t.Errorf("calls = %q, want the snapshot then the single read of %%2", s.calls)
	}
	if obs[1].State == backends.StateAlive {
		t.Errorf("a pane under another name read alive from the snapshot")
	}
}

// The batched capture is cut by the heights its head lists: a pane whose
// rows show a head-like line, with or without this call's nonce, keeps it
// as a row, and output that does not add up to the heights gives no
// screen at all.
func TestSplitCapturesCutsByTheHeightsListed(t *testing.T) {
	nonce := "fmctl-screen-1-2"
	head := nonce + " %1 2 3 2\n" + nonce + " %2 3 1 0\n" + nonce + " %9 1 0 0\n"
	rows := "row a1\n" + nonce + " %2 0 0 0\n" + "row b1\n" + "row b2\n" + "\n"
	got, _ := splitCaptures(head+rows, nonce, []string{"%1", "%2"}, false)
	if len(got) != 2 {
		t.Fatalf("screens = %+v, want two", got)
	}
	a, b := got["%1"], got["%2"]
	if strings.Join(a.Lines, "|") != "row a1|"+nonce+" %2 0 0 0" || !a.Cursor || a.CursorY != 3 || a.CursorX != 2 {
		t.Errorf("%%1 = %+v", a)
	}
	if strings.Join(b.Lines, "|") != "row b1|row b2" || b.CursorY != 1 {
		t.Errorf("%%2 = %+v", b)
	}
	for name, out := range map[string]string{
		"a row short":           head + "row a1\n" + nonce + " %2 0 0 0\n" + "row b1\n" + "row b2\n",
		"a row over":            head + rows + "row c\n",
		"a pane not listed":     nonce + " %1 2 3 2\n" + rows,
		"no newline at the end": head + strings.TrimSuffix(rows, "\n"),
	} {
		if got, _ := splitCaptures(out, nonce, []string{"%1", "%2"}, false); len(got) != 0 {
			t.Errorf("%s: screens = %+v, want none", name, got)
		}
	}
}

// A window made with a newline in its name (tmux prints such a name raw)
// does not end the listing's head: the head runs to the nonce's line
// alone, a line between continues the one before it, and every pane after
// it is listed and captured. A head without that line gives nothing.
func TestSplitCapturesReadsAListingPastARawNewline(t *testing.T) {
	nonce := "fmq1"
	listedLine := func(window, id string) string {
		_, line, _ := strings.Cut(pane("fmses", true, window, id, ""), "\t")
		return "1\t" + strings.TrimSuffix(line, "\n")
	}
	head := nonce + " %1 1 0 0\t" + listedLine("odd\nname", "%1") + "\n" +
		nonce + " %2 2 1 3\t" + listedLine("fm-t2", "%2") + "\n" + nonce + "\n"
	rows := "row of %1\n" + "row a of %2\n" + "row b of %2\n"
	screens, listed := splitCaptures(head+rows, nonce, []string{"%1", "%2"}, true)
	if got := strings.Join(screens["%2"].Lines, "|"); len(screens) != 2 || got != "row a of %2|row b of %2" || screens["%2"].CursorX != 3 {
		t.Fatalf("screens = %+v, want %%1's row and %%2's two", screens)
	}
	w := byWindow(listed)
	if info, ok := findInSnapshot(w, backends.Endpoint{Target: "fmses:fm-t2", Fields: map[string]string{state.KeyTmuxPane: "%2"}}); !ok || info.pane != "%2" {
		t.Errorf("the pane after the odd name is not listed: %+v", listed)
	}
	if s, l := splitCaptures(strings.TrimSuffix(head, nonce+"\n")+rows, nonce, []string{"%1", "%2"}, true); s != nil || l != nil {
		t.Errorf("a head with no end line gave screens %+v and listing %+v", s, l)
	}
}

// captureServer answers the batched capture with err, and counts calls.
type captureServer struct {
	err   error
	calls []string
}

func (s *captureServer) Run(_ context.Context, c backends.Cmd) (backends.Output, error) {
	args := subcommand(c)
	s.calls = append(s.calls, strings.Join(args, " "))
	if strings.Count(strings.Join(args, " "), "capture-pane") > 1 { // the batch, not a single capture
		return backends.Output{}, s.err
	}
	return backends.Output{Stdout: []byte("0 0\nrow\n")}, nil
}

// A batched capture that timed out is not retried one endpoint at a time
// (a tmux that does not answer would cost one more bound per endpoint);
// one that failed otherwise (a pane gone mid-chain) is.
func TestCapturesFallsBackOnlyWhenTmuxAnswered(t *testing.T) {
	eps := []backends.Endpoint{{Target: "fmses:fm-a"}, {Target: "fmses:fm-b"}}
	hung := &captureServer{err: &backends.TimeoutError{Call: "tmux display-message", After: time.Second}}
	tm := New(hung, Options{Procs: &fixedProcs{}})
	tm.pane["fmses:fm-a"], tm.pane["fmses:fm-b"] = "%1", "%2"
	_, errs := tm.Captures(context.Background(), eps)
	if len(hung.calls) != 1 || errs[0] == nil || errs[1] == nil {
		t.Fatalf("timed out: calls %q, errs %v; want the one call, both screens unread", hung.calls, errs)
	}
	gone := &captureServer{err: &backends.RunError{ExitCode: 1, Stderr: "can't find pane: %2"}}
	tm = New(gone, Options{Procs: &fixedProcs{}})
	tm.pane["fmses:fm-a"], tm.pane["fmses:fm-b"] = "%1", "%2"
	screens, errs := tm.Captures(context.Background(), eps)
	if len(gone.calls) != 3 || errs[0] != nil || strings.Join(screens[0].Lines, "|") != "row" {
		t.Fatalf("failed: calls %q, errs %v, screens %+v; want the batch, then one capture each", gone.calls, errs, screens)
	}
}

// batchServer answers a batched capture as tmux does: each
// display-message's format with its pane's cursor, each capture-pane with
// the pane's row; or, when hang is set, every call times out, once hang
// calls are in flight together (as a hung tmux holds each of its callers),
// so the calls Captures overlaps are all made before the first answers.
type batchServer struct {
	mu      sync.Mutex
	calls   [][]string
	hang    int
	allHung chan struct{} // closed when hang calls have arrived
}

func (s *batchServer) Run(_ context.Context, c backends.Cmd) (backends.Output, error) {
	args := subcommand(c)
	s.mu.Lock()
	s.calls = append(s.calls, args)
	if s.hang > 0 && len(s.calls) == s.hang {
		close(s.allHung)
	}
	s.mu.Unlock()
	if s.hang > 0 {
		// Bounded, so a Captures that overlaps fewer calls fails the
		// test on its count rather than hanging it.
		select {
		case <-s.allHung:
		case <-time.After(5 * time.Second):
		}
		return backends.Output{}, &backends.TimeoutError{Call: "tmux display-message", After: time.Second}
	}
	var out strings.Builder
	var panes []string // the panes this call captures: all the server has
	for i := 0; i+3 < len(args); i++ {
		if args[i] == "capture-pane" {
			panes = append(panes, args[i+3])
		}
	}
	for i := 0; i+3 < len(args); i++ {
		switch {
		case args[i] == "list-panes":
			for _, p := range panes {
				out.WriteString(strings.NewReplacer("#D", p, "#{pane_height}", "1", "#{cursor_y}", "1", "#{cursor_x}", "2").Replace(args[i+3]) + "\n")
			}
		case args[i] == "capture-pane":
			out.WriteString("row of " + args[i+3] + "\n")
		}
	}
	return backends.Output{Stdout: []byte(out.String())}, nil
}

// 1500 screens take a few calls, each within what tmux's client sends (a
// longer one is refused whole), and each screen is its own pane's.
func TestCapturesSplitsFifteenHundredScreensAtTheCommandLength(t *testing.T) {
	s := &batchServer{}
	tm, eps := capturesOf(s, 1500)
	screens, errs := tm.Captures(context.Background(), eps)
	if len(s.calls) != 3 {
		t.Fatalf("calls = %d, want 3 for 1500 screens", len(s.calls))
	}
	for _, args := range s.calls {
		if n := argvBytes(args); n > captureCallBytes {
			t.Errorf("a call of %d bytes, over %d", n, captureCallBytes)
		}
	}
	for i := range eps {
		want := fmt.Sprintf("row of %%%d", i+100)
		if errs[i] != nil || strings.Join(screens[i].Lines, "|") != want || screens[i].CursorY != 1 || screens[i].CursorX != 2 {
			t.Fatalf("screen %d = %+v, err %v; want %q at 1,2", i, screens[i], errs[i], want)
		}
	}
}

// A call that timed out ends the read: the batches not yet started are not
// made, and their screens are unread, as the hung ones'.
func TestCapturesStartsNoBatchAfterOneTimedOut(t *testing.T) {
	s := &batchServer{hang: captureCalls, allHung: make(chan struct{})}
	tm, eps := capturesOf(s, 3500)
	_, errs := tm.Captures(context.Background(), eps)
	if len(s.calls) != captureCalls {
		t.Fatalf("calls = %d, want the %d in flight when the first timed out", len(s.calls), captureCalls)
	}
	for i, err := range errs {
		if !errors.As(err, new(*backends.TimeoutError)) {
			t.Fatalf("screen %d: err %v, want the timeout", i, err)
		}
	}
}

// capturesOf is an adapter over s that knows the panes of n endpoints.
func capturesOf(s backends.Runner, n int) (*Adapter, []backends.Endpoint) {
	tm := New(s, Options{Procs: &fixedProcs{}})
	var eps []backends.Endpoint
	for i := range n {
		ep := backends.Endpoint{Target: fmt.Sprintf("fmses:fm-t%d", i)}
		tm.pane[ep.Target] = fmt.Sprintf("%%%d", i+100)
		eps = append(eps, ep)
	}
	return tm, eps
}

// The lean snapshot is the full one with pane_current_command and
// pane_current_path left empty, so one parser reads both.
func TestLeanSnapshotIsTheFullOneWithoutCommandAndPath(t *testing.T) {
	want := strings.NewReplacer("#{pane_current_command}", "", "#{pane_current_path}", "").Replace(snapshotFormat)
	if leanSnapshotFormat != want {
		t.Errorf("leanSnapshotFormat = %q, want %q", leanSnapshotFormat, want)
	}
}
