package realtmux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With FM_TMUX_CONTROL=1 each invocation starts one tmux process, a
// control-mode client carrying every command, and the agent gets exactly
// the bytes it gets from per-process calls: a key, an interrupt with its
// proof the agent survived, and a typed message with its Enter.
//
// It runs only with FM_TEST_TMUX_CONTROL=1: on tmux 3.3a a control client
// attaching while the previous invocation's is still detaching can crash
// the server (docs/performance.md), which here would be a flake, not a
// finding about fmctl.
func TestControlModeIsOneTmuxProcessPerInvocation(t *testing.T) {
	if os.Getenv("FM_TEST_TMUX_CONTROL") != "1" {
		t.Skip("FM_TEST_TMUX_CONTROL=1 runs the control-mode suite (tmux 3.3a's server can crash under it)")
	}
	t.Parallel()
	s := newServer(t)
	a := s.startAgent("t1", "claude")
	for i, c := range []struct {
		bin  string
		args []string
		out  string
	}{
		{"fm-send", []string{"t1", "--key", "Escape"}, "key-delivered t1 key=Escape "},
		{"fm-control", []string{"interrupt", "t1"}, "interrupt-delivered t1 harness=claude backend=tmux verified=agent-alive"},
		{"fm-send", []string{"t1", "hello; it's $HOME #{pane_id};"}, "sent t1 "},
	} {
		trace := s.traceFile("control-" + c.bin + "-" + string(rune('a'+i)))
		r := s.run("", []string{"FM_TMUX_CONTROL=1", "FM_RUNNER_TRACE=" + trace}, c.bin, c.args...)
		wantCode(t, r, 0, c.bin+" "+strings.Join(c.args, " ")+" in control mode")
		if !strings.HasPrefix(r.stdout, c.out) {
			t.Fatalf("stdout = %q, want it to start %q", r.stdout, c.out)
		}
		tmuxProcs, _, lines := traceCounts(t, trace)
		commands := 0
		for _, l := range lines {
			if f := strings.SplitN(l, "\t", 3); filepath.Base(f[1]) == "tmux -C" {
				commands++
			}
		}
		if tmuxProcs != 1 || commands < 2 {
			t.Fatalf("%s made %d tmux processes and %d control commands, want 1 process carrying them all:\n%s", c.bin, tmuxProcs, commands, strings.Join(lines, "\n"))
		}
	}
	a.assertBytes("\x1b\x1bhello; it's $HOME #{pane_id};\r")
	a.assertEvents("interrupt escape", "interrupt escape", `submit "hello; it's $HOME #{pane_id};"`)
}
