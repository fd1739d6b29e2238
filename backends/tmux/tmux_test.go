package tmux

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"

	"fmctl/backends"
	"fmctl/backends/proc"
	"fmctl/harness"
	"fmctl/state"
)

// scriptedTmux answers tmux argv with canned output, as a tmux server with
// one session "fmses" holding windows fm-t1 (%3) and fm-t2 (%4) would.
type scriptedTmux struct {
	windows    string // list-windows output
	listErr    string // stderr for a failing list-windows
	failOthers bool   // every other command fails
}

// fgProc is a foreground process on the pane's terminal.
func fgProc(pid int, comm string, argv ...string) proc.Process {
	return proc.Process{PID: pid, PGID: 20, TPGID: 20, State: 'S', Comm: comm, Argv: argv}
}

// subcommand is a tmux call's argv past the global options every call
// carries (-u, and -L or -S naming the server), as the server reads it.
func subcommand(c backends.Cmd) []string {
	args := c.Args
	for len(args) > 0 {
		switch {
		case args[0] == "-u":
			args = args[1:]
			continue
		case (args[0] == "-L" || args[0] == "-S") && len(args) >= 2:
			args = args[2:]
			continue
		}
		break
	}
	return args
}

func (s *scriptedTmux) Run(_ context.Context, c backends.Cmd) (backends.Output, error) {
	args := subcommand(c)
	if len(args) == 0 {
		return backends.Output{ExitCode: 1}, &backends.RunError{Cmd: c, ExitCode: 1, Stderr: "no command"}
	}
	switch args[0] {
	case "list-windows":
		if s.listErr != "" {
			return backends.Output{ExitCode: 1, Stderr: []byte(s.listErr)}, &backends.RunError{Cmd: c, ExitCode: 1, Stderr: s.listErr}
		}
		return backends.Output{Stdout: []byte(s.windows)}, nil
	case "display-message":
		return backends.Output{Stdout: []byte("2\nline0\n> prev\n> hello\n")}, nil
	}
	if s.failOthers {
		return backends.Output{ExitCode: 1}, &backends.RunError{Cmd: c, ExitCode: 1, Stderr: "can't find pane"}
	}
	return backends.Output{}, nil
}

const twoWindows = "fm-t1\t%3\t1000\t/dev/pts/9\tclaude\t@1\tfmses\t0\t900:1700000000\t/w/t1\nfm-t2\t%4\t2000\t/dev/pts/10\tbash\t@2\tfmses\t0\t900:1700000000\t/w/t2 with\ttab\n"

// fixedProcs is a process table: procs on every tty, and byPID for the
// by-pid reads of the foreground fast path.
type fixedProcs struct {
	mu    sync.Mutex // AgentStates classifies panes at once
	procs []proc.Process
	byPID map[int]proc.Process
	ttys  []string
	pids  []int
}

func (f *fixedProcs) OnTTY(_ context.Context, tty string) ([]proc.Process, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ttys = append(f.ttys, tty)
	return f.procs, nil
}

func (f *fixedProcs) Children(_ context.Context, pid int) ([]int, error) {
	var kids []int
	for _, p := range f.byPID {
		if p.PID != pid && p.PGID == f.byPID[pid].PGID {
			kids = append(kids, p.PID)
		}
	}
	return kids, nil
}

func (f *fixedProcs) Process(_ context.Context, pid int) (proc.Process, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pids = append(f.pids, pid)
	if p, ok := f.byPID[pid]; ok {
		return p, nil
	}
	return proc.Process{}, fmt.Errorf("process %d: %w", pid, fs.ErrNotExist)
}

func newScripted(s *scriptedTmux, procs []proc.Process) (*Adapter, *backends.CountingRunner, *fixedProcs) {
	cr := &backends.CountingRunner{Inner: s}
	fp := &fixedProcs{procs: procs}
	return New(cr, Options{Procs: fp}), cr, fp
}

var t1 = backends.Endpoint{Backend: "tmux", Target: "fmses:fm-t1", TaskID: "t1"}

// checkNoShellAndPaneTargets asserts the adapter only ever ran tmux with an
// argv, and addressed every command after the lookup by pane id.
func checkNoShellAndPaneTargets(t *testing.T, log []backends.Cmd) {
	t.Helper()
	for _, c := range log {
		if c.Path != "tmux" {
			t.Errorf("ran %q, want only tmux (never a shell string): %v", c.Path, c)
		}
		args := subcommand(c)
		for i, a := range args {
			if a != "-t" || i+1 >= len(args) {
				continue
			}
			target := args[i+1]
			if args[0] == "list-windows" {
				if !strings.HasPrefix(target, "=") {
					t.Errorf("list-windows target %q is not an exact session match", target)
				}
				continue
			}
			if !strings.HasPrefix(target, "%") {
				t.Errorf("%s addressed %q, want a pane id %%N, never a window name", args[0], target)
			}
		}
	}
}

func TestTmuxSendKeyCallCounts(t *testing.T) {
	tm, cr, _ := newScripted(&scriptedTmux{windows: twoWindows}, nil)
	ctx := context.Background()
	if err := tm.SendKey(ctx, t1, harness.KeyEscape); err != nil {
		t.Fatal(err)
	}
	if n := cr.Calls("tmux"); n != 2 {
		t.Fatalf("cold SendKey made %d tmux calls, want 2 (lookup + send-keys)", n)
	}
	cr.Reset()
	if err := tm.SendKey(ctx, t1, harness.KeyEnter); err != nil {
		t.Fatal(err)
	}
	if n := cr.Calls("tmux"); n != 1 {
		t.Fatalf("SendKey with the pane id cached made %d tmux calls, want 1", n)
	}
	log := cr.Log()
	if want := []string{"-u", "send-keys", "-t", "%3", "Enter"}; !slices.Equal(log[0].Args, want) {
		t.Errorf("SendKey argv = %q, want %q", log[0].Args, want)
	}
	checkNoShellAndPaneTargets(t, log)
}

func TestTmuxSendKeyMapsEveryNamedKey(t *testing.T) {
	tm, cr, _ := newScripted(&scriptedTmux{windows: twoWindows}, nil)
	for _, k := range harness.NamedKeys {
		cr.Reset()
		if err := tm.SendKey(context.Background(), t1, k); err != nil {
			t.Fatalf("SendKey(%s): %v", k, err)
		}
		log := cr.Log()
		if last := log[len(log)-1].Args; last[len(last)-1] != string(k) {
			t.Errorf("SendKey(%s) sent %q", k, last)
		}
	}
	cr.Reset()
	if err := tm.SendKey(context.Background(), t1, "Tab"); err == nil {
		t.Error("SendKey(Tab) accepted a key outside the named set")
	}
	if n := cr.Calls("tmux"); n != 0 {
		t.Errorf("an unmapped key still made %d tmux calls", n)
	}
}

// The scan path: the by-pid reads find no foreground agent (the table has no
// pids), so the tty's process list decides.
func TestTmuxAgentStateIsOneCall(t *testing.T) {
	tm, cr, fp := newScripted(&scriptedTmux{windows: twoWindows}, []proc.Process{fgProc(7, "claude")})
	ctx := context.Background()
	for i := 0; i < 2; i++ { // cached or not, a state read re-checks the window
		cr.Reset()
		obs := tm.AgentState(ctx, t1)
		if obs.State != backends.StateAlive {
			t.Fatalf("state = %s (%s), want alive", obs.State, obs.Detail)
		}
		if n := cr.Calls("tmux"); n != 1 {
			t.Fatalf("backends.AgentState made %d tmux calls, want exactly 1", n)
		}
		if obs.CurrentPath != "/w/t1" {
			t.Errorf("CurrentPath = %q", obs.CurrentPath)
		}
		checkNoShellAndPaneTargets(t, cr.Log())
	}
	if !slices.Equal(fp.ttys, []string{"/dev/pts/9", "/dev/pts/9"}) {
		t.Errorf("process table read ttys %v, want the pane's /dev/pts/9", fp.ttys)
	}
}

// A pane tmux reports dead takes no key, whatever the process table still
// shows on its terminal: a SIGKILLed agent sits in the foreground for a
// moment under load (fm-send --key reported key-delivered to a dead pane).
func TestTmuxDeadPaneIsDeadWhateverTheProcessTableShows(t *testing.T) {
	dead := strings.Replace(twoWindows, "\tfmses\t0\t900:1700000000\t/w/t1", "\tfmses\t1\t900:1700000000\t/w/t1", 1)
	tm, _, fp := newScripted(&scriptedTmux{windows: dead}, []proc.Process{fgProc(7, "claude")})
	fp.byPID = map[int]proc.Process{1000: {PID: 1000, PGID: 1000, TPGID: 7, State: 'S', Comm: "bash"}, 7: fgProc(7, "claude")}
	if obs := tm.AgentState(context.Background(), t1); obs.State != backends.StateDead {
		t.Fatalf("a dead pane = %s (%s), want dead", obs.State, obs.Detail)
	}
}

// The fast path: pane_pid's stat names a foreground group whose leader is an
// agent, so no tty scan is needed; still one tmux call.
func TestTmuxAgentStateForegroundFastPath(t *testing.T) {
	shell := proc.Process{PID: 1000, PGID: 1000, TPGID: 1007, State: 'S', Comm: "bash"}
	agent := proc.Process{PID: 1007, PGID: 1007, TPGID: 1007, State: 'S', Comm: "node", Argv: []string{"node", "/x/codex.js"}}
	tm, cr, fp := newScripted(&scriptedTmux{windows: twoWindows}, nil)
	fp.byPID = map[int]proc.Process{1000: shell, 1007: agent}
	obs := tm.AgentState(context.Background(), t1)
	if obs.State != backends.StateAlive || obs.CurrentPath != "/w/t1" {
		t.Fatalf("fast path = %+v, want alive at /w/t1", obs)
	}
	if n := cr.Calls("tmux"); n != 1 {
		t.Errorf("backends.AgentState made %d tmux calls, want 1", n)
	}
	if len(fp.ttys) != 0 || !slices.Equal(fp.pids, []int{1000, 1007}) {
		t.Errorf("fast path scanned ttys %v, read pids %v; want no scan, pids [1000 1007]", fp.ttys, fp.pids)
	}
	// A foreground leader that is not an agent falls back to the scan,
	// which must then refuse to call vim alive.
	fp.byPID[1007] = proc.Process{PID: 1007, PGID: 1007, TPGID: 1007, Comm: "vim"}
	fp.procs = []proc.Process{{PID: 1000, PGID: 1000, TPGID: 1007, Comm: "bash"}, fp.byPID[1007]}
	tm2, _, _ := newScripted(&scriptedTmux{windows: strings.Replace(twoWindows, "claude", "vim", 1)}, nil)
	tm2.o.Procs = fp
	if obs := tm2.AgentState(context.Background(), t1); obs.State != backends.StateUnattributed {
		t.Errorf("vim in the foreground = %s, want unattributed", obs.State)
	}
	// The shell itself in the foreground (tpgid == its pgid) is no fast answer.
	fp.byPID[1000] = proc.Process{PID: 1000, PGID: 1000, TPGID: 1000, Comm: "bash"}
	fp.procs = []proc.Process{fp.byPID[1000]}
	tm3, _, _ := newScripted(&scriptedTmux{windows: strings.Replace(twoWindows, "claude", "bash", 1)}, nil)
	tm3.o.Procs = fp
	if obs := tm3.AgentState(context.Background(), t1); obs.State != backends.StateDead {
		t.Errorf("only the shell = %s, want dead", obs.State)
	}
}

func TestTmuxLookupStates(t *testing.T) {
	cases := []struct {
		name    string
		script  scriptedTmux
		target  string
		want    backends.AgentState
		wantMsg string
	}{
		{"window absent", scriptedTmux{windows: twoWindows}, "fmses:fm-t9", backends.StateMissing, "no window named fm-t9"},
		{"prefix is not a match", scriptedTmux{windows: "fm-t1x\t%5\t1\t/dev/pts/1\tclaude\t@5\tfmses\t0\t900:1700000000\t/w\n"}, "fmses:fm-t1", backends.StateMissing, "no window named"},
		{"session gone", scriptedTmux{listErr: "can't find session: fmses"}, "fmses:fm-t1", backends.StateMissing, "is gone"},
		{"no server", scriptedTmux{listErr: "no server running on /tmp/tmux-0/default"}, "fmses:fm-t1", backends.StateUnreadable, "unreachable"},
		{"socket gone", scriptedTmux{listErr: "error connecting to /tmp/x (No such file or directory)"}, "fmses:fm-t1", backends.StateUnreadable, "unreachable"},
		{"other failure", scriptedTmux{listErr: "server exited unexpectedly"}, "fmses:fm-t1", backends.StateUnreadable, "server exited"},
		{"two windows with the name", scriptedTmux{windows: twoWindows + "fm-t1\t%9\t3000\t/dev/pts/3\tbash\t@9\tfmses\t0\t900:1700000000\t/x\n"}, "fmses:fm-t1", backends.StateUnreadable, "2 windows are named fm-t1"},
		{"malformed target", scriptedTmux{windows: twoWindows}, "fm-t1", backends.StateUnreadable, "not session:window"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := c.script
			tm, cr, _ := newScripted(&script, []proc.Process{fgProc(7, "claude")})
			obs := tm.AgentState(context.Background(), backends.Endpoint{Target: c.target})
			if obs.State != c.want || !strings.Contains(obs.Detail, c.wantMsg) {
				t.Errorf("backends.AgentState = %s %q, want %s containing %q", obs.State, obs.Detail, c.want, c.wantMsg)
			}
			cr.Reset()
			if err := tm.SendKey(context.Background(), backends.Endpoint{Target: c.target}, harness.KeyEscape); err == nil {
				t.Error("SendKey to an unresolved endpoint succeeded")
			}
			for _, cmd := range cr.Log() {
				if cmd.Args[0] == "send-keys" {
					t.Errorf("a key was sent although the lookup failed: %v", cmd)
				}
			}
		})
	}
}

func TestTmuxSendTextShortLongAndMultiline(t *testing.T) {
	tm, cr, _ := newScripted(&scriptedTmux{windows: twoWindows}, nil)
	ctx := context.Background()
	if err := tm.SendText(ctx, t1, "hello; world;"); err != nil {
		t.Fatal(err)
	}
	log := cr.Log()
	if len(log) != 2 {
		t.Fatalf("cold SendText made %d calls, want 2", len(log))
	}
	if want := []string{"-u", "send-keys", "-t", "%3", "-l", "--", `hello; world\;`}; !slices.Equal(log[1].Args, want) {
		t.Errorf("short text argv = %q, want %q", log[1].Args, want)
	}
	for _, text := range []string{"line1\nline2", strings.Repeat("x", 4096)} {
		cr.Reset()
		if err := tm.SendText(ctx, t1, text); err != nil {
			t.Fatal(err)
		}
		log := cr.Log()
		if len(log) != 1 {
			t.Fatalf("warm paste made %d calls, want 1", len(log))
		}
		c := log[0]
		if string(c.Stdin) != text {
			t.Errorf("paste stdin = %d bytes, want the text whole (%d)", len(c.Stdin), len(text))
		}
		if subcommand(c)[0] != "load-buffer" || !slices.Contains(c.Args, "paste-buffer") || !slices.Contains(c.Args, "-p") || !slices.Contains(c.Args, "-d") {
			t.Errorf("paste argv = %q, want load-buffer ; paste-buffer -p -d", c.Args)
		}
		if slices.Contains(c.Args, text) {
			t.Error("long text rode the argv instead of stdin")
		}
	}
	checkNoShellAndPaneTargets(t, cr.Log())
}

func TestTmuxCaptureReadsTheCursorRow(t *testing.T) {
	tm, cr, _ := newScripted(&scriptedTmux{windows: twoWindows}, nil)
	s, err := tm.Capture(context.Background(), t1)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Cursor || s.CursorY != 2 || !slices.Equal(s.Lines, []string{"line0", "> prev", "> hello"}) {
		t.Errorf("screen = %+v", s)
	}
	if n := cr.Calls("tmux"); n != 2 {
		t.Errorf("cold Capture made %d calls, want 2", n)
	}
	checkNoShellAndPaneTargets(t, cr.Log())
}

func TestTmuxSocketOptionPrefixesEveryCall(t *testing.T) {
	cr := &backends.CountingRunner{Inner: &scriptedTmux{windows: twoWindows}}
	tm := New(cr, Options{Socket: "fmtest-1", Procs: &fixedProcs{}})
	tm.AgentState(context.Background(), t1)
	_ = tm.SendKey(context.Background(), t1, harness.KeyEnter)
	for _, c := range cr.Log() {
		// -u first: in a locale that is not UTF-8, tmux would print the
		// tab between a lookup's fields as "_".
		if len(c.Args) < 3 || c.Args[0] != "-u" || c.Args[1] != "-L" || c.Args[2] != "fmtest-1" {
			t.Errorf("call %q does not start -u -L <the private server>", c.Args)
		}
	}
	cr.Reset()
	tm = New(cr, Options{Socket: "ignored", SocketPath: "/tmp/s", Procs: &fixedProcs{}})
	tm.AgentState(context.Background(), t1)
	if a := cr.Log()[0].Args; a[0] != "-u" || a[1] != "-S" || a[2] != "/tmp/s" {
		t.Errorf("SocketPath not preferred: %q", a)
	}
}

func TestEscapeTmuxArg(t *testing.T) {
	cases := map[string]string{
		"":         "",
		"hello":    "hello",
		";":        `\;`,
		"a;":       `a\;`,
		"a;b":      "a;b",
		"a;;":      `a;\;`,
		`a\;`:      `a\\;`,
		"ends in ": "ends in ",
	}
	for in, want := range cases {
		if got := escapeTmuxArg(in); got != want {
			t.Errorf("escapeTmuxArg(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitTmuxTarget(t *testing.T) {
	good := map[string][2]string{"fmses:fm-t1": {"fmses", "fm-t1"}, "s:fm-a.b": {"s", "fm-a.b"}}
	for in, want := range good {
		s, w, err := SplitTarget(in)
		if err != nil || s != want[0] || w != want[1] {
			t.Errorf("SplitTarget(%q) = %q,%q,%v", in, s, w, err)
		}
	}
	for _, bad := range []string{"", "fm-t1", ":fm-t1", "fmses:", "a:b:c", ":"} {
		if s, w, err := SplitTarget(bad); err == nil {
			t.Errorf("SplitTarget(%q) = %q,%q, want refused", bad, s, w)
		}
	}
}

func TestTmuxValidateRecord(t *testing.T) {
	tm := New(&scriptedTmux{}, Options{Procs: &fixedProcs{}})
	ok := []backends.Endpoint{{Target: "fmses:fm-t1", TaskID: "t1"}, {Target: "my_ses-1.x@y%z+:fm-a.b", TaskID: "a.b"}, {Target: "s:anything"}}
	for _, ep := range ok {
		if err := tm.ValidateRecord(ep); err != nil {
			t.Errorf("ValidateRecord(%+v) = %v", ep, err)
		}
	}
	bad := []struct{ target, task, want string }{
		{"fmses:fm-t1", "t2", "not task t2's window fm-t2"},
		{"fmses:fm-t10", "t1", "not task t1's window"},
		{"fmses:fm-T1", "t1", "not task t1's window"},
		{"fmses:fm-t1.1", "t1", "not task t1's window"}, // tmux would read .1 as a pane index
		{"fmses:=fm-t1", "t1", "not task t1's window"},
		{"fmses:fm-t1;", "t1", "not task t1's window"},
		{"fmses:fm-t1 ", "t1", "not task t1's window"},
		{"fmses:fm-t1\nx", "t1", "not task t1's window"},
		{"remote:t1", "t1", "not task t1's window"},
		{"fmses", "t1", "not session:window"},
		{"fmses:fm-t1:x", "t1", "not session:window"},
		{"my ses:fm-t1", "t1", "characters outside"},
		{"s;kill:fm-t1", "t1", "characters outside"},
		{"$(id):fm-t1", "t1", "characters outside"},
		{"=fmses:fm-t1", "t1", "characters outside"},
		{"fmses\t:fm-t1", "t1", "characters outside"},
	}
	for _, c := range bad {
		err := tm.ValidateRecord(backends.Endpoint{Target: c.target, TaskID: c.task})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ValidateRecord(%q, task %q) = %v, want %q", c.target, c.task, err, c.want)
		}
	}
	// The recorded pane pid goes into a tmux format: digits only.
	for _, pid := range []string{"", "0", "12a", "1}", "-1", "#{pane_pid}"} {
		ep := backends.Endpoint{Target: "fmses:fm-t1", TaskID: "t1", Fields: map[string]string{state.KeyTmuxPanePID: pid}}
		if err := tm.ValidateRecord(ep); err == nil || !strings.Contains(err.Error(), "not a process id") {
			t.Errorf("ValidateRecord(tmux_pane_pid=%q) = %v, want it refused", pid, err)
		}
	}
	if err := tm.ValidateRecord(backends.Endpoint{Target: "fmses:fm-t1", TaskID: "t1", Fields: map[string]string{state.KeyTmuxPanePID: "4242"}}); err != nil {
		t.Errorf("ValidateRecord(tmux_pane_pid=4242) = %v", err)
	}
}

// treeProcs adds a descendant walk that returns tree.
type treeProcs struct {
	fixedProcs
	tree []proc.Process
}

func (f *treeProcs) OnTTYUnder(_ context.Context, tty string, root int) ([]proc.Process, error) {
	return f.tree, nil
}

// The classifier reads the pane shell's tree, and scans every process only
// when that tree's foreground is no more than a shell: an orphan re-parented
// out of it could be the foreground, or an agent still ending.
func TestClassifyScansAllProcessesOnlyWhenTheTreeMissesTheForeground(t *testing.T) {
	shell := proc.Process{PID: 10, PGID: 10, TPGID: 10, State: 'S', Comm: "bash"}
	orphan := proc.Process{PID: 30, PGID: 30, TPGID: 30, State: 'S', Comm: "vim"}
	info := paneInfo{pid: 10, tty: "/dev/pts/9", command: "bash"}

	agent := proc.Process{PID: 11, PGID: 11, TPGID: 11, State: 'S', Comm: "claude"}
	fgShell := proc.Process{PID: 10, PGID: 10, TPGID: 11, State: 'S', Comm: "bash"}
	tp := &treeProcs{tree: []proc.Process{fgShell, agent}}
	obs := New(nil, Options{Procs: tp}).classify(context.Background(), info)
	if obs.State != backends.StateAlive || len(tp.ttys) != 0 {
		t.Errorf("an agent in the foreground of the shell's tree: %s with %d full scans, want alive with none", obs.State, len(tp.ttys))
	}

	tp = &treeProcs{tree: []proc.Process{shell}, fixedProcs: fixedProcs{procs: []proc.Process{shell}}}
	obs = New(nil, Options{Procs: tp}).classify(context.Background(), info)
	if obs.State != backends.StateDead || len(tp.ttys) != 1 {
		t.Errorf("a shell alone in the foreground: %s with %d full scans, want dead after one", obs.State, len(tp.ttys))
	}

	ending := proc.Process{PID: 40, PGID: 40, TPGID: 10, State: 'S', Comm: "opencode"}
	tp = &treeProcs{tree: []proc.Process{shell}, fixedProcs: fixedProcs{procs: []proc.Process{shell, ending}}}
	obs = New(nil, Options{Procs: tp}).classify(context.Background(), info)
	if obs.State != backends.StateUnattributed {
		t.Errorf("an agent re-parented to init still on the terminal: %s (%s), want unattributed, never dead", obs.State, obs.Detail)
	}

	bgShell := shell
	bgShell.TPGID = 30
	tp = &treeProcs{tree: []proc.Process{bgShell}, fixedProcs: fixedProcs{procs: []proc.Process{bgShell, orphan}}}
	obs = New(nil, Options{Procs: tp}).classify(context.Background(), info)
	if obs.State != backends.StateUnattributed || len(tp.ttys) != 1 {
		t.Errorf("foreground outside the tree: %s with %d full scans, want unattributed after one", obs.State, len(tp.ttys))
	}
}

// keyThenRead answers list-windows from windows and a joined
// `send-keys ; display-message` with the pane line readBack.
type keyThenRead struct {
	scriptedTmux
	readBack string
}

func (k *keyThenRead) Run(ctx context.Context, c backends.Cmd) (backends.Output, error) {
	if slices.Contains(c.Args, "send-keys") && slices.Contains(c.Args, "display-message") {
		return backends.Output{Stdout: []byte(k.readBack)}, nil
	}
	return k.scriptedTmux.Run(ctx, c)
}

// An interrupt's last key and the read proving the agent survived are one
// tmux call; a pane that reads back elsewhere is looked up afresh.
func TestSendKeyThenStateIsOneCall(t *testing.T) {
	line := strings.SplitN(twoWindows, "\n", 2)[0] + "\n"
	k := &keyThenRead{scriptedTmux: scriptedTmux{windows: twoWindows}, readBack: line}
	cr := &backends.CountingRunner{Inner: k}
	tm := New(cr, Options{Procs: &fixedProcs{}})
	ctx := context.Background()
	if _, err := tm.paneID(ctx, t1); err != nil {
		t.Fatal(err)
	}
	cr.Reset()
	obs, err := tm.SendKeyThenState(ctx, t1, harness.KeyEscape)
	if err != nil || obs.State != backends.StateAlive {
		t.Fatalf("SendKeyThenState = %+v, %v; want alive", obs, err)
	}
	log := cr.Log()
	want := []string{"-u", "send-keys", "-t", "%3", "Escape", ";", "display-message", "-p", "-t", "%3", paneFormat}
	if len(log) != 1 || !slices.Equal(log[0].Args, want) {
		t.Fatalf("calls = %q, want one: %q", log, want)
	}

	k.readBack = strings.Replace(line, "fm-t1", "renamed", 1)
	cr.Reset()
	obs, err = tm.SendKeyThenState(ctx, t1, harness.KeyEscape)
	if err != nil || cr.Calls("tmux") != 2 || obs.State != backends.StateAlive {
		t.Fatalf("a pane read back elsewhere: %+v, %v after %d calls; want a fresh lookup (2 calls)", obs, err, cr.Calls("tmux"))
	}
}
