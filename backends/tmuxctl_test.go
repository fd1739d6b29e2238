package backends

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"fmctl/harness"
)

// scriptedControl is a control client whose tmux is a function from each
// command line it reads to the lines it prints back.
type scriptedControl struct {
	hello   []string // printed before any command is read (the attach's own block)
	answer  func(n int, line string) []string
	got     []string
	stopped bool
	timeout time.Duration
}

func (s *scriptedControl) Start(c Cmd) (*Started, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		defer outW.Close()
		for _, l := range s.hello {
			fmt.Fprintln(outW, l)
		}
		sc := bufio.NewScanner(inR)
		for n := 0; sc.Scan(); n++ {
			s.got = append(s.got, sc.Text())
			lines := s.answer(n, sc.Text())
			if lines == nil {
				return
			}
			for _, l := range lines {
				fmt.Fprintln(outW, l)
			}
		}
	}()
	return &Started{Stdin: inW, Stdout: outR, Timeout: s.timeout, Stop: func() {
		s.stopped = true
		inW.Close()
		outR.Close()
	}}, nil
}

func block(n int, flags string, end string, body ...string) []string {
	out := []string{fmt.Sprintf("%%begin 1700000000 %d %s", n, flags)}
	out = append(out, body...)
	return append(out, fmt.Sprintf("%s 1700000000 %d %s", end, n, flags))
}

// Each command of a ';' list is its own line and answer block; notifications
// and the attach's own block (flags 0) are skipped, and a body line that
// merely looks like an end marker stays text.
func TestControlRunsACommandListOneLineEachAndSkipsNotifications(t *testing.T) {
	s := &scriptedControl{
		hello: append(block(1, "0", "%end"), "%session-changed $0 s"),
		answer: func(n int, line string) []string {
			if n == 0 {
				return append([]string{"%window-add @3"}, block(10, "1", "%end", "3 4")...)
			}
			return block(11, "1", "%end", "row one", "%end 1 2 3", "", "last")
		},
	}
	c, err := startControl(s, "tmux", []string{"-L", "x"}, "s")
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.run(context.Background(), []string{"display-message", "-p", "-t", "%1", "#{cursor_y} #{cursor_x}", ";", "capture-pane", "-p", "-t", "%1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "3 4\nrow one\n%end 1 2 3\n\nlast\n"; string(out.Stdout) != want {
		t.Errorf("output = %q, want %q", out.Stdout, want)
	}
	want := []string{`'display-message' '-p' '-t' '%1' '#{cursor_y} #{cursor_x}'`, `'capture-pane' '-p' '-t' '%1'`}
	if !reflect.DeepEqual(s.got, want) {
		t.Errorf("lines sent = %q, want %q", s.got, want)
	}
}

// A failing command is a RunError whose stderr is tmux's message, and the
// rest of the list is not sent (as tmux stops a list at its first error).
func TestControlErrorStopsTheListWithTmuxsMessage(t *testing.T) {
	s := &scriptedControl{answer: func(n int, line string) []string {
		return block(20+n, "1", "%error", "can't find pane: %9")
	}}
	c, _ := startControl(s, "tmux", nil, "s")
	_, err := c.run(context.Background(), []string{"send-keys", "-t", "%9", "Escape", ";", "display-message", "-p", "x"})
	var re *RunError
	if !errors.As(err, &re) || StderrOf(err) != "can't find pane: %9" {
		t.Fatalf("err = %v, want a RunError with tmux's message", err)
	}
	if len(s.got) != 1 {
		t.Errorf("sent %d lines after the first failed, want 1", len(s.got))
	}
}

// An attach tmux refused (no such session) runs nothing, so the command
// may go as a process instead; a client that ends after it ran something
// is an error, never silently retried.
func TestControlRefusedAttachIsGoneButAnEndedClientIsAnError(t *testing.T) {
	refused := &scriptedControl{hello: block(1, "0", "%error", "can't find session: s"), answer: func(int, string) []string { return nil }}
	c, _ := startControl(refused, "tmux", nil, "s")
	if _, err := c.run(context.Background(), []string{"send-keys", "-t", "%1", "Escape"}); !errors.Is(err, errControlGone) {
		t.Fatalf("after a refused attach err = %v, want errControlGone", err)
	}
	if _, err := c.run(context.Background(), []string{"display-message", "-p", "x"}); !errors.Is(err, errControlGone) {
		t.Fatalf("a second call = %v, want errControlGone", err)
	}

	silent := &scriptedControl{answer: func(int, string) []string { return nil }}
	c, _ = startControl(silent, "tmux", nil, "s")
	if _, err := c.run(context.Background(), []string{"send-keys", "-t", "%1", "Escape"}); !errors.Is(err, errControlGone) {
		t.Fatalf("a client that ended without a word: err = %v, want errControlGone", err)
	}

	ended := &scriptedControl{hello: []string{"%session-changed $0 s"}, answer: func(int, string) []string { return nil }}
	c, _ = startControl(ended, "tmux", nil, "s")
	_, err := c.run(context.Background(), []string{"send-keys", "-t", "%1", "Escape"})
	if err == nil || errors.Is(err, errControlGone) {
		t.Fatalf("a client that ended without answering: err = %v, want an error that is not errControlGone", err)
	}
}

// A client that does not answer within FM_MUX_TIMEOUT is killed and the
// error names the call, like a timed-out process.
func TestControlTimeoutKillsTheClientAndNamesTheCall(t *testing.T) {
	s := &scriptedControl{timeout: 50 * time.Millisecond, answer: func(int, string) []string { return []string{} }}
	c, _ := startControl(s, "tmux", nil, "s")
	start := time.Now()
	_, err := c.run(context.Background(), []string{"capture-pane", "-p", "-t", "%1"})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Call != "tmux capture-pane" {
		t.Fatalf("err = %v, want a TimeoutError naming tmux capture-pane", err)
	}
	if time.Since(start) > 2*time.Second || !s.stopped {
		t.Errorf("took %v, stopped=%v; want the client killed at its bound", time.Since(start), s.stopped)
	}
}

// Quoting keeps every word literal for tmux's parser, and a ';' the argv
// form had to escape is plain inside quotes.
func TestSplitAndQuoteCommands(t *testing.T) {
	cmds := splitCommands([]string{"send-keys", "-t", "%1", "-l", "--", escapeTmuxArg("it's a;"), ";", "send-keys", "-t", "%1", "Enter"})
	want := [][]string{{"send-keys", "-t", "%1", "-l", "--", "it's a;"}, {"send-keys", "-t", "%1", "Enter"}}
	if !reflect.DeepEqual(cmds, want) {
		t.Fatalf("splitCommands = %q, want %q", cmds, want)
	}
	if got := quoteCommand([]string{"x", `it's $HOME #{pane_id} \ ~ {`}); got != `'x' 'it'"'"'s $HOME #{pane_id} \ ~ {'` {
		t.Errorf("quoteCommand = %s", got)
	}
	if strings.Contains(quoteCommand([]string{"a;"}), `\`) {
		t.Error("a quoted ';' was escaped")
	}
}

// On a real private server the control client answers exactly as separate
// tmux processes do, starts one process for a whole operation, and leaves
// the session as it found it: no window resized, no current window changed,
// no client left attached once closed. One client only: tmux 3.3a can crash
// when one attaches while another detaches (docs/performance.md).
func TestControlClientMatchesProcessCallsOnARealServer(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	buf := make([]byte, 6)
	rand.Read(buf)
	sock := "fmctl-" + hex.EncodeToString(buf)
	sockDir := t.TempDir()
	t.Setenv("TMUX_TMPDIR", sockDir)
	t.Setenv("TMUX", "")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	pane := tmux("new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "s", "-n", "fm-a", "-x", "90", "-y", "20", "cat")
	t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })
	tmux("new-window", "-d", "-t", "=s:", "-n", "other")
	tmux("send-keys", "-t", pane, "-l", "héllo │ it's; ok")
	looks := func() string {
		return tmux("display-message", "-p", "-t", "=s:", "#{window_name} #{window_width}x#{window_height} #{session_attached}")
	}
	before := looks()

	ep := Endpoint{Target: "s:fm-a", Fields: map[string]string{KeyTmuxPane: pane}}
	ctx := context.Background()
	cr := &CountingRunner{Inner: &ExecRunner{}}
	viaCtl := NewTmux(countingStarter{cr}, TmuxOptions{Socket: sock, Control: true})
	viaProc := NewTmux(&ExecRunner{}, TmuxOptions{Socket: sock})
	deadline := time.Now().Add(5 * time.Second)
	for {
		a, errA := viaCtl.Capture(ctx, ep)
		b, errB := viaProc.Capture(ctx, ep)
		if errA != nil || errB != nil {
			t.Fatalf("Capture: control %v, process %v", errA, errB)
		}
		if reflect.DeepEqual(a, b) && strings.Contains(strings.Join(a.Lines, "\n"), "héllo │ it's; ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("captures differ:\ncontrol %+v\nprocess %+v", a, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if a, b := viaCtl.AgentState(ctx, ep), viaProc.AgentState(ctx, ep); a.State != b.State || a.CurrentPath != b.CurrentPath {
		t.Errorf("AgentState: control %+v, process %+v", a, b)
	}
	if got := cr.Calls("tmux"); got != 0 {
		t.Errorf("the control adapter ran %d tmux processes besides its client, want 0", got)
	}
	if gone := viaCtl.AgentState(ctx, Endpoint{Target: "s:fm-a", Fields: map[string]string{KeyTmuxPane: "%99"}}); gone.State != StateDrifted {
		t.Errorf("a gone pane whose label lives on reads %s, want drifted", gone.State)
	}
	if err := viaCtl.SendKey(ctx, ep, harness.KeyCtrlU); err != nil {
		t.Fatal(err)
	}
	viaCtl.Close()
	viaProc.Close()
	deadline = time.Now().Add(5 * time.Second)
	for looks() != before {
		if time.Now().After(deadline) {
			t.Fatalf("the session reads %q after the control client, want %q as before", looks(), before)
		}
		time.Sleep(20 * time.Millisecond)
	}

}

// countingStarter counts the processes its runner runs while starting the
// control client through a plain ExecRunner.
type countingStarter struct{ *CountingRunner }

func (c countingStarter) Start(cmd Cmd) (*Started, error) { return (&ExecRunner{}).Start(cmd) }
