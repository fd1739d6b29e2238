package tmux_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/backends/mux"
	"fmctl/backends/tmux"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/state"
)

// The adapter Open builds takes the wire only where FM_TMUX_WIRE lets it:
// by default on tmux 3.7c alone (the machine's 3.3a gets a tmux client
// per call), with FM_TMUX_WIRE=1 on any release from 3.2 to 3.7, never
// with FM_TMUX_WIRE=0; its operations work the same every way.
func TestTmuxAdapterTakesTheWireAsFMTmuxWireSays(t *testing.T) {
	sock, pane := tmux.PrivateTmux(t)
	version := strings.TrimSpace(string(tmux.Must(exec.Command("tmux", "-V").Output())))
	for _, c := range []struct {
		setting string
		wire    bool
	}{
		{"", version == "tmux 3.7c"},
		{"1", true},
		{"0", false},
	} {
		t.Run("FM_TMUX_WIRE="+c.setting, func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "trace")
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			m := config.DefaultTunables().Mux
			m.TmuxSocket, m.TmuxWire = sock, c.setting
			be, err := mux.Open("tmux", backends.NewExecRunner(trace), os.Getenv, m)
			if err != nil {
				t.Fatal(err)
			}
			tm := be.(*tmux.Adapter)
			ctx := context.Background()
			ep := backends.Endpoint{Target: "s:fm-a", Fields: map[string]string{state.KeyTmuxPane: pane}}
			mark := "paste<" + c.setting + ">"
			line := mark + "\nof two lines"
			if err := tm.SendText(ctx, ep, line); err != nil {
				t.Fatal(err)
			}
			if err := tm.SendKey(ctx, ep, harness.KeyEnter); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				s, err := tm.Capture(ctx, ep)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(strings.Join(s.Lines, "\n"), mark) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the paste never showed: %q", s.Lines)
				}
				time.Sleep(20 * time.Millisecond)
			}
			procs, wire := tmux.TraceCount(t, trace, "tmux"), tmux.TraceCount(t, trace, tmux.WireTraceName)
			if c.wire && (procs != 0 || wire < 3) {
				t.Errorf("%s: %d tmux processes and %d wire calls, want only wire calls", version, procs, wire)
			}
			if !c.wire && (procs < 3 || wire != 0) {
				t.Errorf("%s: %d tmux processes and %d wire calls, want only processes", version, procs, wire)
			}
		})
	}
}
