package tmux

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"fmctl/backends"
	"fmctl/backends/proc"
	"fmctl/harness"
	"fmctl/state"
)

// gatedTmux answers the gated if-shell call with answer, a pane read with
// the fm-t1 line of twoWindows, and anything else (send-keys) with nothing.
type gatedTmux struct{ answer string }

func (g *gatedTmux) Run(_ context.Context, c backends.Cmd) (backends.Output, error) {
	args := subcommand(c)
	switch {
	case args[0] == "if-shell":
		return backends.Output{Stdout: []byte(g.answer)}, nil
	case args[0] == "display-message" && slices.Contains(args, paneFormat):
		return backends.Output{Stdout: []byte(strings.SplitN(twoWindows, "\n", 2)[0] + "\n")}, nil
	}
	return backends.Output{}, nil
}

// t1 as fm-spawn records it: the pane's ids and its shell's pid.
var t1Gated = backends.Endpoint{Backend: "tmux", Target: "fmses:fm-t1", TaskID: "t1",
	Fields: map[string]string{state.KeyTmuxPane: "%3", state.KeyTmuxWindow: "@1", state.KeyTmuxPanePID: "1000"}}

func gatedRig(answer string, leader proc.Process) (*Adapter, *backends.CountingRunner) {
	shell := proc.Process{PID: 1000, PGID: 1000, TPGID: leader.PGID, State: 'S', Comm: "bash"}
	cr := &backends.CountingRunner{Inner: &gatedTmux{answer: answer}}
	return New(cr, Options{Procs: &fixedProcs{byPID: map[int]proc.Process{1000: shell, leader.PID: leader}}}), cr
}

var claudeLeader = proc.Process{PID: 1007, PGID: 1007, TPGID: 1007, State: 'S', Comm: "claude", Argv: []string{"claude"}}

func acceptClaude(obs backends.Observation) error {
	if obs.State != backends.StateAlive || !slices.Equal(obs.Names, []string{"claude"}) {
		return errors.New("refused: " + string(obs.State))
	}
	return nil
}

// The agent under the recorded pid passes the gate, and the key is one
// tmux call whose condition checks every recorded fact server-side.
func TestSendKeyGatedIsOneCheckedCall(t *testing.T) {
	tm, cr := gatedRig(gateSent+"\n", claudeLeader)
	res, err := tm.SendKeyGated(context.Background(), t1Gated, harness.KeyEscape, backends.GatedKey{Gate: acceptClaude})
	if err != nil || res.Refused != nil {
		t.Fatalf("SendKeyGated = %+v, %v", res, err)
	}
	log := cr.Log()
	if len(log) != 1 {
		t.Fatalf("calls = %q, want one", log)
	}
	want := []string{"if-shell", "-F", "-t", "%3",
		"#{&&:#{==:#{pane_id},%3},#{&&:#{==:#{window_id},@1},#{&&:#{==:#{session_name},fmses},#{&&:#{==:#{window_name},fm-t1},#{&&:#{==:#{pane_pid},1000},#{&&:#{==:#{pane_current_command},claude},#{==:#{pane_dead},0}}}}}}}",
		"display-message -p " + gateSent + " ; send-keys -t %3 Escape", "display-message -p " + gateRefused}
	if got := subcommand(log[0]); !slices.Equal(got, want) {
		t.Fatalf("gated call = %q,\nwant         %q", got, want)
	}
}

// A record that names its server has tmux check that server too: after a
// restart, pane %3 with the same pid could be another server's.
func TestGateChecksTheRecordedServer(t *testing.T) {
	ep := t1Gated
	ep.Fields = map[string]string{state.KeyTmuxPane: "%3", state.KeyTmuxWindow: "@1", state.KeyTmuxPanePID: "1000", state.KeyTmuxServer: "900:1700000000"}
	g, ok := gateOf(ep)
	if !ok {
		t.Fatal("no gate for a record with its server")
	}
	if c := g.condition(); !strings.HasPrefix(c, "#{&&:#{==:#{pid},900},#{&&:#{==:#{start_time},1700000000},") {
		t.Fatalf("condition %q does not check the server first", c)
	}
	ep.Fields[state.KeyTmuxServer] = "900;kill-server"
	if _, ok := gateOf(ep); ok {
		t.Fatal("a malformed server identity went into a tmux format")
	}
}

// With the screen before and the state after, the one call's answer is
// split into the three.
func TestSendKeyGatedReadsTheScreenBeforeAndTheStateAfter(t *testing.T) {
	line := strings.SplitN(twoWindows, "\n", 2)[0]
	tm, cr := gatedRig(gateSent+"\n1 4\nrow0\n> hi\n"+line+"\n", claudeLeader)
	res, err := tm.SendKeyGated(context.Background(), t1Gated, harness.KeyEscape, backends.GatedKey{Gate: acceptClaude, ReadAfter: true, ScreenBefore: true})
	if err != nil || cr.Calls("tmux") != 1 {
		t.Fatalf("SendKeyGated = %+v, %v after %d calls", res, err, cr.Calls("tmux"))
	}
	if res.Before == nil || !slices.Equal(res.Before.Lines, []string{"row0", "> hi"}) || res.Before.CursorY != 1 || res.Before.CursorX != 4 {
		t.Errorf("screen before = %+v, want rows [row0 > hi], cursor 1,4", res.Before)
	}
	if res.After == nil || res.After.State != backends.StateAlive || res.After.CurrentPath != "/w/t1" {
		t.Errorf("state after = %+v, want alive at /w/t1", res.After)
	}
}

// tmux refusing the key (the pane is not the recorded one) sends nothing
// there: the full read follows, and its verdict decides.
func TestSendKeyGatedFallsBackWhenTmuxRefuses(t *testing.T) {
	tm, cr := gatedRig(gateRefused+"\n", claudeLeader)
	res, err := tm.SendKeyGated(context.Background(), t1Gated, harness.KeyEscape, backends.GatedKey{Gate: acceptClaude})
	if err != nil || res.Refused != nil {
		t.Fatalf("SendKeyGated = %+v, %v", res, err)
	}
	var cmds []string
	for _, c := range cr.Log() {
		cmds = append(cmds, subcommand(c)[0])
	}
	if !slices.Equal(cmds, []string{"if-shell", "display-message", "send-keys"}) {
		t.Fatalf("calls = %q, want the refused gated call, the full read, then the key", cmds)
	}
}

// What the fast path cannot accept (another harness in the foreground, a
// record without the pid) takes the full read, whose verdict is returned
// unchanged and sends nothing.
func TestSendKeyGatedRefusalIsTheFullReads(t *testing.T) {
	codex := proc.Process{PID: 1007, PGID: 1007, TPGID: 1007, State: 'S', Comm: "node", Argv: []string{"node", "/x/codex.js"}}
	tm, cr := gatedRig(gateSent+"\n", codex)
	refuse := errors.New("not claude")
	res, err := tm.SendKeyGated(context.Background(), t1Gated, harness.KeyEscape, backends.GatedKey{Gate: func(backends.Observation) error { return refuse }})
	if err != nil || res.Refused != refuse {
		t.Fatalf("SendKeyGated = %+v, %v; want the gate's own refusal", res, err)
	}
	for _, c := range cr.Log() {
		if cmd := subcommand(c)[0]; cmd != "display-message" {
			t.Errorf("a refused key ran %s", cmd)
		}
	}
	noPID := backends.Endpoint{Backend: "tmux", Target: "fmses:fm-t1", TaskID: "t1", Fields: map[string]string{state.KeyTmuxPane: "%3", state.KeyTmuxWindow: "@1"}}
	tm, cr = gatedRig(gateSent+"\n", claudeLeader)
	if _, err := tm.SendKeyGated(context.Background(), noPID, harness.KeyEscape, backends.GatedKey{Gate: acceptClaude}); err != nil {
		t.Fatal(err)
	}
	if n := cr.Calls("tmux"); n != 2 || slices.Contains(cr.Log()[0].Args, "if-shell") {
		t.Fatalf("a record without the pid made %d calls (%q), want the read and the key", n, cr.Log())
	}
}

// The foreground check names the agent as tmux's #{pane_current_command}
// does, and only where tmux names the agent at all: when it leads its own
// process group.
func TestForegroundNameIsTmuxsCurrentCommand(t *testing.T) {
	for _, c := range []struct {
		p    proc.Process
		want string
	}{
		{proc.Process{PID: 7, PGID: 7, Argv: []string{"claude"}}, "claude"},
		{proc.Process{PID: 7, PGID: 7, Argv: []string{"/usr/bin/node", "/x/codex.js"}}, "node"},
		{proc.Process{PID: 7, PGID: 7, Argv: []string{"-bash"}}, "bash"},
		{proc.Process{PID: 7, PGID: 7, Argv: []string{"./claude"}}, ""}, // tmux keeps "./claude"; not a plain atom
		{proc.Process{PID: 7, PGID: 7, Argv: []string{"a}b"}}, ""},      // would break the format
		{proc.Process{PID: 8, PGID: 7, Argv: []string{"claude"}}, ""},   // sh -c: tmux names the shell
		{proc.Process{PID: 7, PGID: 7, Comm: "claude"}, ""},             // no argv to name it by
	} {
		if got := foregroundName(c.p); got != c.want {
			t.Errorf("foregroundName(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}

// statProcs is fixedProcs that reads a process's stat alone, without its
// argv, where asked to.
type statProcs struct {
	*fixedProcs
	stats []int
}

func (s *statProcs) Stat(_ context.Context, pid int) (proc.Process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = append(s.stats, pid)
	p, ok := s.byPID[pid]
	if !ok {
		return proc.Process{}, errors.New("no such process")
	}
	p.Argv = nil
	return p, nil
}

// The pane's shell is read from its stat alone: only the foreground
// leader's argv names the agent.
func TestClassifyReadsTheShellsStatAlone(t *testing.T) {
	shell := proc.Process{PID: 1000, PGID: 1000, TPGID: claudeLeader.PGID, State: 'S', Comm: "bash", Argv: []string{"bash"}}
	procs := &statProcs{fixedProcs: &fixedProcs{byPID: map[int]proc.Process{1000: shell, claudeLeader.PID: claudeLeader}}}
	tm := New(&gatedTmux{}, Options{Procs: procs})
	obs := tm.classify(context.Background(), paneInfo{pane: "%3", pid: 1000, tty: "/dev/pts/3", command: "claude"})
	if obs.State != backends.StateAlive || !slices.Equal(obs.Names, []string{"claude"}) {
		t.Fatalf("obs = %+v, want claude alive", obs)
	}
	if !slices.Equal(procs.stats, []int{1000}) || !slices.Equal(procs.pids, []int{claudeLeader.PID}) {
		t.Errorf("stat read %v, whole process read %v; want the shell's stat, the leader whole", procs.stats, procs.pids)
	}
}
