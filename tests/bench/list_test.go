package bench

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fmctl/tests/privtmux"
)

// listTasks is the fleet issue 39 sizes list for.
const listTasks = 500

var listRuns = flag.Int("bench.listruns", 9, "runs of list (and of the direct captures) over the 500 tasks")

// screenMark is a line every list task's screen shows, so a capture can be
// counted in what tmux printed.
const screenMark = "fmbench list screen"

// tmuxCommandBytes is what one tmux client call may carry: the client
// sends its argv (each word and its NUL) in one message of at most 16 KiB
// with its header, and refuses a longer one ("command too long").
const tmuxCommandBytes = 16364

// BenchmarkList500 is `fm-control list` over 500 tasks, each a record and
// a pane on a private tmux server whose foreground process is named as
// its harness (a copy of sleep named claude, under a shell, over a screen
// of text), so list classifies each as a live agent and reads its screen
// as status does. Beside it, interleaved run by run, the same 500 screens read
// directly: `capture-pane -p -t %N` chained with `;` in as few tmux
// client calls as the command length allows. It fails when list prints
// other than 500 live claude rows, or its traced run did not capture
// every one of the 500 panes.
func BenchmarkList500(b *testing.B) {
	fx := newListFleet(b, listTasks)
	trace, r, err := tracedAt(fx.home, fx.sock, nil, "fm-control", "list")
	if err != nil {
		b.Fatal(err)
	}
	fx.check(b, r)
	tmuxCalls, captured := 0, map[string]bool{}
	for _, call := range traceCalls(trace) {
		if filepath.Base(call[0]) != "tmux" {
			continue
		}
		tmuxCalls++
		words := strings.Fields(call[1])
		for i := 0; i+3 < len(words); i++ {
			if words[i] == `"capture-pane"` {
				captured[strings.Trim(words[i+3], `"[]`)] = true
			}
		}
	}
	for _, p := range fx.panes {
		if !captured[p] {
			b.Fatalf("list made no capture of pane %s in its %d tmux calls: it did not read each task's screen", p, tmuxCalls)
		}
	}
	base := fx.captureCalls()
	var lists, direct []time.Duration
	b.ResetTimer()
	for range max(1, b.N) {
		for range *listRuns {
			r := runBinEnv(envAt(fx.home, fx.sock, ""), "", nil, "fm-control", "list")
			fx.check(b, r)
			lists = append(lists, r.wall)
			d := fx.captureAll(b, base)
			if d < 0 {
				b.Fatalf("the direct captures did not print all %d screens", listTasks)
			}
			direct = append(direct, d)
		}
	}
	b.StopTimer()
	l, d := median(lists), median(direct)
	lo, hi := pairedSpread(lists, direct)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("\nlist of %d tasks (load average %s): list %s ms in %d tmux calls (%d other processes); the same %d captures directly %s ms in %d tmux calls; ratio %.2f× (run by run p25–p75 %.2f–%.2f×)\n",
		listTasks, strings.TrimSpace(string(load)), ms(l), tmuxCalls, len(traceCalls(trace))-tmuxCalls, listTasks, ms(d), len(base), float64(l)/float64(d), lo, hi)
	b.ReportMetric(float64(l.Microseconds())/1000, "ms-list")
	b.ReportMetric(float64(d.Microseconds())/1000, "ms-direct")
	b.ReportMetric(float64(l)/float64(d), "ratio")
}

// listFleet is a private tmux server with n tasks and the home naming them.
type listFleet struct {
	home, sock string
	panes      []string
}

func newListFleet(b *testing.B, n int) *listFleet {
	dir := b.TempDir()
	fx := &listFleet{home: filepath.Join(dir, "home"), sock: fmt.Sprintf("fmbench-list-%d-%d", os.Getpid(), rand.IntN(1<<20))}
	for _, d := range []string{"state", "data", "config"} {
		if err := os.MkdirAll(filepath.Join(fx.home, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	// The agent: sleep under its harness's process name, after a screen of
	// text, so each capture carries rows as an agent's does.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		b.Fatal(err)
	}
	agent := filepath.Join(dir, "claude")
	if err := copyFile(sleep, agent); err != nil {
		b.Fatal(err)
	}
	screen := filepath.Join(dir, "screen")
	var text bytes.Buffer
	for i := range 30 {
		fmt.Fprintf(&text, "%s, row %02d: lorem ipsum dolor sit amet, consectetur adipiscing elit\n", screenMark, i)
	}
	if err := os.WriteFile(screen, text.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	// As fm-spawn's pane: a shell that runs the agent as its child.
	cmd := "bash --norc --noprofile -c 'cat " + screen + "; " + agent + " 100000; exec bash'"
	b.Cleanup(func() {
		privtmux.Kill(func(args ...string) *exec.Cmd {
			return exec.Command("tmux", append([]string{"-L", fx.sock}, args...)...)
		}, fx.sock)
	})
	for i := range n {
		id := fmt.Sprintf("l%03d", i)
		args := []string{"-L", fx.sock, "-f", "/dev/null", "new-window", "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}", "-t", "=fmses:"}
		if i == 0 {
			args = []string{"-L", fx.sock, "-f", "/dev/null", "new-session", "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}", "-s", "fmses", "-x", "200", "-y", "50"}
		}
		out, err := exec.Command("tmux", append(args, "-n", "fm-"+id, "-c", dir, cmd)...).Output()
		ids := strings.Fields(string(out))
		if err != nil || len(ids) != 3 {
			b.Fatalf("start the pane of %s: %v (tmux printed %q)", id, err, out)
		}
		fx.panes = append(fx.panes, ids[0])
		meta := fmt.Sprintf("window=fmses:fm-%s\ntmux_pane_id=%s\ntmux_window_id=%s\ntmux_pane_pid=%s\nendpoint_task_id=%s\nworktree=%s\nproject=%s\nharness=claude\nkind=ship\nmodel=default\neffort=default\nspawn_gen=%s\n", id, ids[0], ids[1], ids[2], id, dir, dir, benchGen)
		if err := os.WriteFile(filepath.Join(fx.home, "state", id+".meta"), []byte(meta), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Every screen drawn before anything is timed.
	deadline := time.Now().Add(30 * time.Second)
	for fx.captureAll(b, fx.captureCalls()) < 0 {
		if time.Now().After(deadline) {
			b.Fatal("the list panes did not draw their screens within 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fx
}

// check fails the bench unless list printed one live claude row per task.
func (fx *listFleet) check(b *testing.B, r run) {
	b.Helper()
	if r.code != 0 {
		b.Fatalf("fm-control list exited %d:\n%s", r.code, r.output)
	}
	rows := 0
	for _, line := range strings.Split(r.output, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], "l") && containsAll(f, "harness=claude", "state=alive") {
			rows++
		}
	}
	if rows != listTasks {
		b.Fatalf("fm-control list printed %d live claude rows, want %d:\n%s", rows, listTasks, r.output)
	}
}

func containsAll(words []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(words, w) {
			return false
		}
	}
	return true
}

// captureCalls chains a capture of every pane into as few tmux command
// lines as tmuxCommandBytes allows.
func (fx *listFleet) captureCalls() [][]string {
	var calls [][]string
	var args []string
	size := 0
	for _, p := range fx.panes {
		words := []string{"capture-pane", "-p", "-t", p, ";"}
		n := 0
		for _, w := range words {
			n += len(w) + 1
		}
		if len(args) > 0 && size+n > tmuxCommandBytes {
			calls = append(calls, args[:len(args)-1])
			args, size = nil, 0
		}
		args, size = append(args, words...), size+n
	}
	return append(calls, args[:len(args)-1])
}

// captureAll makes the calls and returns their wall time, or -1 when they
// did not print every pane's screen (each shows screenMark on its rows).
func (fx *listFleet) captureAll(b *testing.B, calls [][]string) time.Duration {
	b.Helper()
	start := time.Now()
	var out []byte
	for _, args := range calls {
		o, err := exec.Command("tmux", append([]string{"-L", fx.sock}, args...)...).CombinedOutput()
		if err != nil {
			b.Fatalf("tmux capture-pane ×%d: %v\n%s", strings.Count(strings.Join(args, " "), "capture-pane"), err, o)
		}
		out = append(out, o...)
	}
	wall := time.Since(start)
	if got := bytes.Count(out, []byte(screenMark+", row 29")); got != len(fx.panes) {
		return -1
	}
	return wall
}
