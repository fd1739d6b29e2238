package tmux

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/backends/proc"
	"fmctl/state"
)

// idTmux answers display-message -t %N with pane (or, for an absent pane,
// with the empty fields tmux 3.3a prints), and list-windows with windows.
type idTmux struct {
	pane    string // the display-message line; "" = the pane is gone
	windows string
	stderr  string // every call fails with this
	calls   []string
}

func (s *idTmux) Run(_ context.Context, c backends.Cmd) (backends.Output, error) {
	args := subcommand(c)
	s.calls = append(s.calls, strings.Join(args, " "))
	if s.stderr != "" {
		return backends.Output{ExitCode: 1}, &backends.RunError{Cmd: c, ExitCode: 1, Stderr: s.stderr}
	}
	switch args[0] {
	case "display-message":
		if s.pane == "" {
			return backends.Output{Stdout: []byte("\t\t\t\t\t\t\t\n")}, nil
		}
		return backends.Output{Stdout: []byte(s.pane + "\n")}, nil
	case "list-windows":
		return backends.Output{Stdout: []byte(s.windows)}, nil
	}
	return backends.Output{}, nil
}

func TestTmuxLookupByRecordedPaneID(t *testing.T) {
	ep := backends.Endpoint{Backend: "tmux", Target: "fmses:fm-t1", TaskID: "t1", Fields: map[string]string{state.KeyTmuxPane: "%3", state.KeyTmuxWindow: "@1"}}
	cases := []struct {
		name   string
		tm     idTmux
		state  backends.AgentState
		detail string
		calls  int
	}{
		{"in place", idTmux{pane: "fm-t1\t%3\t0\t\tbash\t@1\tfmses\t0\t900:1700000000\t/w/t1"}, backends.StateDead, "", 1},
		{"window renamed", idTmux{pane: "other\t%3\t0\t\tbash\t@1\tfmses\t0\t900:1700000000\t/w/t1"}, backends.StateDrifted, "%3 in fmses:other", 1},
		{"window moved", idTmux{pane: "fm-t1\t%3\t0\t\tbash\t@1\telsewhere\t0\t900:1700000000\t/w/t1"}, backends.StateDrifted, "%3 in elsewhere:fm-t1", 1},
		{"pane gone, label lives on", idTmux{windows: "fm-t1\t%8\t0\t\tbash\t@6\tfmses\t0\t900:1700000000\t/w\n"}, backends.StateDrifted, "%8 in fmses:fm-t1", 2},
		{"pane and label gone", idTmux{windows: "fm-t2\t%4\t0\t\tbash\t@2\tfmses\t0\t900:1700000000\t/w\n"}, backends.StateMissing, "no window is named fm-t1", 2},
		{"no server", idTmux{stderr: "no server running on /tmp/tmux-0/x"}, backends.StateUnreadable, "unreachable", 1},
		{"wrong socket", idTmux{stderr: "error connecting to /tmp/tmux-0/y (No such file or directory)"}, backends.StateUnreadable, "unreachable", 1},
		{"other failure", idTmux{stderr: "server exited unexpectedly"}, backends.StateUnreadable, "server exited", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tm := New(&tc.tm, Options{Procs: &fixedProcs{}})
			obs := tm.AgentState(context.Background(), ep)
			if obs.State != tc.state || !strings.Contains(obs.Detail, tc.detail) {
				t.Fatalf("state %s (%s), want %s containing %q", obs.State, obs.Detail, tc.state, tc.detail)
			}
			if len(tc.tm.calls) != tc.calls {
				t.Fatalf("%d tmux calls %q, want %d", len(tc.tm.calls), tc.tm.calls, tc.calls)
			}
			if !strings.HasPrefix(tc.tm.calls[0], "display-message -p -t %3 ") {
				t.Fatalf("first call %q, want display-message addressed to the recorded pane id", tc.tm.calls[0])
			}
		})
	}
}

// A restarted tmux server (or a rebooted machine) numbers its panes from
// %0 again: a recorded id that another server issued names whatever took it
// there, never the task's pane, so the task reads missing (relaunch and
// teardown then work) rather than drifted into another task's window.
func TestTmuxRecordedIDOfAGoneServerIsMissing(t *testing.T) {
	ep := backends.Endpoint{Backend: "tmux", Target: "fmses:fm-t4", TaskID: "t4", Fields: map[string]string{
		state.KeyTmuxPane: "%1", state.KeyTmuxWindow: "@1", state.KeyTmuxPanePID: "4242", state.KeyTmuxServer: "900:1700000000"}}
	reused := "fm-t6\t%1\t5151\t\tbash\t@1\tfmses\t0\t777:1800000000\t/w/t6"
	cases := []struct {
		name   string
		tm     idTmux
		state  backends.AgentState
		detail string
		legacy bool // the record predates tmux_server
	}{
		{"the id now names another task's window", idTmux{pane: reused}, backends.StateMissing, "tmux restarted (server pid 900, now 777)", false},
		{"a window with the label made by the new server", idTmux{pane: reused, windows: "fm-t4\t%7\t6000\t\tbash\t@7\tfmses\t0\t777:1800000000\t/w\n"}, backends.StateMissing, "is a new server's window", false},
		{"a record from before tmux_server, the id now another task's", idTmux{pane: "fm-t6\t%1\t5151\t\tbash\t@1\tfmses\t0\t777:1800000000\t/w/t6"}, backends.StateMissing, "its id now names task t6's window", true},
		{"same server, the pane respawned (another first process)", idTmux{pane: "fm-t4\t%1\t5151\t\tbash\t@1\tfmses\t0\t900:1700000000\t/w/t4"}, backends.StateDead, "", false},
		{"same server, same pane, renamed", idTmux{pane: "other\t%1\t4242\t\tbash\t@1\tfmses\t0\t900:1700000000\t/w/t4"}, backends.StateDrifted, "%1 in fmses:other", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep := ep
			if tc.legacy {
				ep.Fields = map[string]string{state.KeyTmuxPane: "%1", state.KeyTmuxWindow: "@1"}
			}
			tm := New(&tc.tm, Options{Procs: &fixedProcs{}})
			obs := tm.AgentState(context.Background(), ep)
			if obs.State != tc.state || !strings.Contains(obs.Detail, tc.detail) {
				t.Fatalf("state %s (%s), want %s containing %q", obs.State, obs.Detail, tc.state, tc.detail)
			}
		})
	}
	// The snapshot list reads must not take the reused pane either.
	if _, ok := findInSnapshot(byWindow([]snapPane{{active: true, info: mustPane(t, reused)}}), ep); ok {
		t.Fatal("the list snapshot took a pane of another server for the task's")
	}
}

// No server at the socket is a wrong FM_TMUX_SOCKET as often as a restart:
// the task reads missing only once the recorded server's process is gone or
// is another program; a live tmux under its pid keeps it unreadable.
func TestTmuxNoServerIsMissingOnlyWhenTheRecordedServerIsGone(t *testing.T) {
	ep := backends.Endpoint{Backend: "tmux", Target: "fmses:fm-t4", TaskID: "t4", Fields: map[string]string{
		state.KeyTmuxPane: "%1", state.KeyTmuxWindow: "@1", state.KeyTmuxServer: "900:1700000000"}}
	cases := []struct {
		name  string
		procs map[int]proc.Process
		state backends.AgentState
	}{
		{"the server's process is gone (a reboot)", nil, backends.StateMissing},
		{"its pid is another program now", map[int]proc.Process{900: {PID: 900, Comm: "sshd"}}, backends.StateMissing},
		{"a tmux still runs under it (a wrong socket)", map[int]proc.Process{900: {PID: 900, Comm: "tmux: server"}}, backends.StateUnreadable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tm := New(&idTmux{stderr: "no server running on /tmp/tmux-0/x"}, Options{Procs: &fixedProcs{byPID: tc.procs}})
			if obs := tm.AgentState(context.Background(), ep); obs.State != tc.state {
				t.Fatalf("state %s (%s), want %s", obs.State, obs.Detail, tc.state)
			}
		})
	}
}

func mustPane(t *testing.T, line string) paneInfo {
	t.Helper()
	p, ok := parsePaneLine(line)
	if !ok {
		t.Fatalf("unparsable pane line %q", line)
	}
	return p
}

func TestTmuxValidateRecordChecksIDShapes(t *testing.T) {
	tm := New(&idTmux{}, Options{Procs: &fixedProcs{}})
	for _, f := range []map[string]string{{state.KeyTmuxPane: "3"}, {state.KeyTmuxWindow: "%1"}, {state.KeyTmuxPane: "%3;x"}} {
		if err := tm.ValidateRecord(backends.Endpoint{Target: "fmses:fm-t1", TaskID: "t1", Fields: f}); err == nil {
			t.Errorf("ValidateRecord accepted %v", f)
		}
	}
	if err := tm.ValidateRecord(backends.Endpoint{Target: "fmses:fm-t1", TaskID: "t1", Fields: map[string]string{state.KeyTmuxPane: "%3", state.KeyTmuxWindow: "@1"}}); err != nil {
		t.Errorf("ValidateRecord refused good ids: %v", err)
	}
}

// scriptRunner answers each tmux command (by its first word, in order) with
// the next canned reply.
type scriptRunner struct {
	replies map[string][]reply
	calls   []string
}

type reply struct{ out, stderr string }

func (s *scriptRunner) Run(_ context.Context, c backends.Cmd) (backends.Output, error) {
	args := subcommand(c)
	s.calls = append(s.calls, strings.Join(args, " "))
	q := s.replies[args[0]]
	if len(q) == 0 {
		return backends.Output{}, nil
	}
	r := q[0]
	s.replies[args[0]] = q[1:]
	if r.stderr != "" {
		return backends.Output{ExitCode: 1}, &backends.RunError{Cmd: c, ExitCode: 1, Stderr: r.stderr}
	}
	return backends.Output{Stdout: []byte(r.out)}, nil
}

func TestTmuxCreateJoinsASessionAnotherSpawnCreated(t *testing.T) {
	sr := &scriptRunner{replies: map[string][]reply{
		"list-windows": {{stderr: "can't find session: s"}},
		"new-window":   {{stderr: "can't find session: s"}, {out: "%7\t@3\n"}},
		"new-session":  {{stderr: "duplicate session: s"}},
	}}
	fields, err := New(sr, Options{Procs: &fixedProcs{}}).Create(context.Background(), backends.CreateSpec{TaskID: "t1", Label: "fm-t1", Dir: "/w", Container: "s"})
	if err != nil {
		t.Fatalf("Create: %v (calls %q)", err, sr.calls)
	}
	want := []backends.Field{{Key: "window", Value: "s:fm-t1"}, {Key: state.KeyTmuxPane, Value: "%7"}, {Key: state.KeyTmuxWindow, Value: "@3"}}
	if len(fields) != 3 || fields[0] != want[0] || fields[1] != want[1] || fields[2] != want[2] {
		t.Fatalf("fields %v, want %v", fields, want)
	}
}

func TestTmuxCreateStartsAServerThatIsNotRunning(t *testing.T) {
	sr := &scriptRunner{replies: map[string][]reply{
		"list-windows": {{stderr: "no server running on /tmp/tmux-0/x"}},
		"new-window":   {{stderr: "no server running on /tmp/tmux-0/x"}},
		"new-session":  {{out: "%0\t@0\n"}},
	}}
	fields, err := New(sr, Options{Procs: &fixedProcs{}}).Create(context.Background(), backends.CreateSpec{TaskID: "t1", Label: "fm-t1", Dir: "/w"})
	if err != nil || fields[0].Value != DefaultSession+":fm-t1" || fields[1].Value != "%0" {
		t.Fatalf("Create = %v, %v (calls %q)", fields, err, sr.calls)
	}
}

func TestTmuxCreateRefusesAnUnreadableServer(t *testing.T) {
	sr := &scriptRunner{replies: map[string][]reply{"list-windows": {{stderr: "server exited unexpectedly"}}}}
	if _, err := New(sr, Options{Procs: &fixedProcs{}}).Create(context.Background(), backends.CreateSpec{TaskID: "t1", Label: "fm-t1", Dir: "/w", Container: "s"}); err == nil {
		t.Fatalf("Create went ahead on a server it could not read (calls %q)", sr.calls)
	}
	for _, c := range sr.calls {
		if strings.HasPrefix(c, "new-") {
			t.Fatalf("Create ran %q after an unreadable lookup", c)
		}
	}
}

func TestTmuxClaimRenamesTheWindowBackOrRefuses(t *testing.T) {
	renamed := "other\t%3\t0\t\tclaude\t@1\ts\t0\t900:1700000000\t/w\n"
	sr := &scriptRunner{replies: map[string][]reply{"display-message": {{out: renamed}}, "list-windows": {{out: "home\t%0\t0\t\tbash\t@0\ts\t0\t900:1700000000\t/\n"}}}}
	tm := New(sr, Options{Procs: &fixedProcs{}})
	fields, err := tm.Claim(context.Background(), backends.Pane{ID: "%3"}, "fm-t1")
	if err != nil || fields[0].Value != "s:fm-t1" || fields[2].Value != "@1" {
		t.Fatalf("Claim = %v, %v", fields, err)
	}
	if sr.calls[len(sr.calls)-1] != "rename-window -t @1 fm-t1" {
		t.Fatalf("last call %q, want the window renamed back by its id", sr.calls[len(sr.calls)-1])
	}
	taken := &scriptRunner{replies: map[string][]reply{"display-message": {{out: renamed}}, "list-windows": {{out: "fm-t1\t%9\t0\t\tbash\t@9\ts\t0\t900:1700000000\t/\n"}}}}
	if _, err := New(taken, Options{Procs: &fixedProcs{}}).Claim(context.Background(), backends.Pane{ID: "%3"}, "fm-t1"); err == nil || !strings.Contains(err.Error(), "already has a window named fm-t1") {
		t.Fatalf("Claim over a taken label: %v (calls %q)", err, taken.calls)
	}
}

// tmuxPaneID and tmuxWindowID are hand-written so that nothing compiles a
// regexp at start-up; they must accept exactly what the regexps did.
func TestTmuxIDMatchersAgreeWithRegexps(t *testing.T) {
	pane := regexp.MustCompile(`^%[0-9]+$`)
	window := regexp.MustCompile(`^@[0-9]+$`)
	for _, s := range []string{"", "%", "@", "%0", "%12", "@0", "@34", "%%1", "%1a", "%a", "@-1", " %1", "%1 ", "1", "%１", "%1\n"} {
		if got, want := tmuxPaneID(s), pane.MatchString(s); got != want {
			t.Errorf("tmuxPaneID(%q) = %v, the regexp says %v", s, got, want)
		}
		if got, want := tmuxWindowID(s), window.MatchString(s); got != want {
			t.Errorf("tmuxWindowID(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}

// stateCaptureTmux answers the one-call read of status and wait: the pane
// line, the cursor and the screen; for an absent pane the chain fails at
// capture-pane, as tmux 3.3a's does. Any other call is idTmux's.
type stateCaptureTmux struct {
	idTmux
	fail error // the one call's error, when set
}

func (s *stateCaptureTmux) Run(ctx context.Context, c backends.Cmd) (backends.Output, error) {
	args := subcommand(c)
	if !strings.Contains(strings.Join(args, " "), "capture-pane") {
		return s.idTmux.Run(ctx, c)
	}
	s.calls = append(s.calls, strings.Join(args, " "))
	if s.fail != nil {
		return backends.Output{ExitCode: -1}, s.fail
	}
	if s.pane == "" {
		return backends.Output{ExitCode: 1}, &backends.RunError{Cmd: c, ExitCode: 1, Stderr: "can't find pane: %3"}
	}
	if slices.Contains(args, "-J") { // History's capture: no cursor line
		return backends.Output{Stdout: []byte(s.pane + "\nold line\n❯ hello\n\n\n")}, nil
	}
	return backends.Output{Stdout: []byte(s.pane + "\n4 2\n❯ hello\n──\n")}, nil
}

// Each look of read --follow is one tmux call: the pane's line, then its
// last lines with scrollback; a pane that does not read back as the
// endpoint's gives no lines.
func TestTmuxAgentStateAndHistoryIsOneCall(t *testing.T) {
	ep := backends.Endpoint{Backend: "tmux", Target: "fmses:fm-t1", TaskID: "t1", Fields: map[string]string{state.KeyTmuxPane: "%3", state.KeyTmuxWindow: "@1"}}
	fake := stateCaptureTmux{idTmux: idTmux{pane: "fm-t1\t%3\t0\t\tbash\t@1\tfmses\t0\t900:1700000000\t/w/t1"}}
	tm := New(&fake, Options{Procs: &fixedProcs{}})
	obs, rows, err := tm.AgentStateAndHistory(context.Background(), ep, 500)
	if err != nil || obs.State != backends.StateDead || !slices.Equal(rows, []string{"old line", "❯ hello"}) {
		t.Fatalf("state %s, rows %q, err %v", obs.State, rows, err)
	}
	if len(fake.calls) != 1 || !strings.Contains(fake.calls[0], "capture-pane -p -J -S -500 -t %3") {
		t.Fatalf("tmux calls %q, want one with the history capture", fake.calls)
	}
	moved := stateCaptureTmux{idTmux: idTmux{pane: "other\t%3\t0\t\tbash\t@1\tfmses\t0\t900:1700000000\t/w/t1"}}
	if obs, rows, err := New(&moved, Options{Procs: &fixedProcs{}}).AgentStateAndHistory(context.Background(), ep, 500); err == nil || rows != nil || obs.State != backends.StateDrifted {
		t.Fatalf("renamed window: state %s, rows %q, err %v; want drifted and no lines", obs.State, rows, err)
	}
}

func TestTmuxAgentStateAndCaptureIsOneCallOrTheOrdinaryLookup(t *testing.T) {
	withID := backends.Endpoint{Backend: "tmux", Target: "fmses:fm-t1", TaskID: "t1", Fields: map[string]string{state.KeyTmuxPane: "%3", state.KeyTmuxWindow: "@1"}}
	noID := backends.Endpoint{Backend: "tmux", Target: "fmses:fm-t1", TaskID: "t1"}
	cases := []struct {
		name   string
		ep     backends.Endpoint
		tm     stateCaptureTmux
		state  backends.AgentState
		screen bool
		calls  int
	}{
		{"in place: one call", withID, stateCaptureTmux{idTmux: idTmux{pane: "fm-t1\t%3\t0\t\tbash\t@1\tfmses\t0\t900:1700000000\t/w/t1"}}, backends.StateDead, true, 1},
		{"window renamed: no screen", withID, stateCaptureTmux{idTmux: idTmux{pane: "other\t%3\t0\t\tbash\t@1\tfmses\t0\t900:1700000000\t/w/t1"}}, backends.StateDrifted, false, 2},
		{"pane gone: no screen", withID, stateCaptureTmux{idTmux: idTmux{windows: "fm-t2\t%4\t0\t\tbash\t@2\tfmses\t0\t900:1700000000\t/w\n"}}, backends.StateMissing, false, 3},
		{"no pane id recorded: the label lookup", noID, stateCaptureTmux{idTmux: idTmux{windows: "fm-t1\t%8\t0\t\tbash\t@6\tfmses\t0\t900:1700000000\t/w\n"}}, backends.StateDead, false, 1},
		// A server that did not answer is not asked again.
		{"hung server: one call", withID, stateCaptureTmux{fail: &backends.TimeoutError{Call: "tmux display-message", After: time.Second}}, backends.StateUnreadable, false, 1},
		{"no server: one call", withID, stateCaptureTmux{fail: &backends.RunError{ExitCode: 1, Stderr: "no server running on /tmp/tmux-0/x"}}, backends.StateUnreadable, false, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tm := New(&tc.tm, Options{Procs: &fixedProcs{}})
			obs, s, err := tm.AgentStateAndCapture(context.Background(), tc.ep)
			if obs.State != tc.state {
				t.Fatalf("state %s (%s), want %s", obs.State, obs.Detail, tc.state)
			}
			if (err == nil) != tc.screen {
				t.Fatalf("screen read = %v (%v), want %v", err == nil, err, tc.screen)
			}
			if tc.screen && (len(s.Lines) != 2 || s.Lines[0] != "❯ hello" || s.CursorY != 4 || s.CursorX != 2) {
				t.Fatalf("screen %+v", s)
			}
			if len(tc.tm.calls) != tc.calls {
				t.Fatalf("%d tmux calls %q, want %d", len(tc.tm.calls), tc.tm.calls, tc.calls)
			}
		})
	}
}
