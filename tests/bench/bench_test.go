// Package bench measures the binaries on a private real tmux server with a
// fake agent, side by side with one bare tmux call measured in the same run.
// For each operation it reports the median wall time, its ratio to the
// median of one bare `tmux display-message`, the tmux client processes and
// the other processes the operation started (from its runner trace,
// FM_RUNNER_TRACE), and the peak RSS of the fmctl process. Rows cover 1 and
// 500 windows on the server, and 10 B / 64 KB / 1 MB messages (the large
// ones twice in a row, each checked to arrive whole).
//
//	make bench   (go test -run '^$' -bench . -benchtime 1x ./tests/bench/)
//
// It prints a markdown table for docs/performance.md. It is a benchmark,
// never a timed test: nothing here fails on a slow or noisy machine.
package bench

import (
	"bytes"
	"flag"
	"fmctl/harness"
	"fmctl/harness/wiring"
	"fmctl/state"
	"fmctl/tests/privtmux"
	"fmctl/tests/testbin"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	binDir     string
	socket     string
	home       string
	userHome   string                           // the fake agents' HOME, where their records go
	claude     task                             // t1: the fake agent as claude, the main rows
	codex      task                             // t2: as codex, which has no paste settle
	pane       string                           // t1's pane id, the bare call's target
	timeBin, _ = exec.LookPath("/usr/bin/time") // GNU time, for peak RSS; "" reports none
	iters      = flag.Int("bench.iters", 20, "iterations of each small operation")
	large      = flag.Bool("bench.large", true, "include the 64 KB and 1 MB messages")
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	// Under plain `go test` (no -bench) there is nothing to measure, so no
	// server is started.
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		return m.Run(), nil
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		fmt.Println("skip: tmux not found on PATH; the benchmarks need a real tmux")
		return 0, nil
	}
	dir, err := os.MkdirTemp("", "fmctl-bench-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	binDir = filepath.Join(dir, "bin")
	// The binaries are built as make builds them.
	if err := testbin.Build(testbin.Dir(binDir), nil, "./cmd/..."); err != nil {
		return 0, err
	}
	if err := testbin.Build(filepath.Join(dir, "agents", "claude"), nil, "./tests/fakeagent"); err != nil {
		return 0, err
	}
	home = filepath.Join(dir, "home")
	userHome = filepath.Join(dir, "user")
	for _, d := range []string{"state", "data", "config"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			return 0, err
		}
	}
	wt := filepath.Join(dir, "wt")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		return 0, err
	}
	socket = fmt.Sprintf("fmbench-%d-%d", os.Getpid(), rand.IntN(1<<20))
	claude = task{id: "t1", harness: "claude", bin: filepath.Join(dir, "agents", "claude"), events: filepath.Join(dir, "events-t1.log")}
	codex = task{id: "t2", harness: "codex", bin: filepath.Join(dir, "agents", "codex"), events: filepath.Join(dir, "events-t2.log")}
	if err := copyFile(claude.bin, codex.bin); err != nil {
		return 0, err
	}
	if err := claude.start(wt, true); err != nil {
		return 0, err
	}
	defer privtmux.Kill(func(args ...string) *exec.Cmd {
		return exec.Command("tmux", append([]string{"-L", socket}, args...)...)
	}, socket)
	if err := codex.start(wt, false); err != nil {
		return 0, err
	}
	pane = claude.pane
	return m.Run(), nil
}

// task is one fake agent in its own window with its record.
type task struct {
	id, harness string
	bin         string // the fake agent, named as its harness
	events      string // FAKEAGENT_EVENTS
	pane        string
	cmd         string // the pane's command: the fake agent, then a shell
}

// start opens the task's window (the session's first when first is set),
// writes its record naming the pane's ids and its shell's pid, as fm-spawn
// writes it, and waits for the agent.
func (k *task) start(wt string, first bool) error {
	shell := "bash --norc --noprofile"
	key, err := k.wire(wt)
	if err != nil {
		return err
	}
	// The events path is part of the command, so a respawn keeps it. The
	// agent's HOME is the run's own: its record goes there, not into the
	// user's ~/.claude.
	k.cmd = shell + " -c 'HOME=" + userHome + " " + harness.EventKeyEnv + "=" + key + " FAKEAGENT_EVENTS=" + k.events + " " + k.bin + "; exec " + shell + "'"
	args := []string{"-L", socket, "-f", "/dev/null", "new-window", "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}", "-t", "=fmses:"}
	if first {
		args = []string{"-L", socket, "-f", "/dev/null", "new-session", "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}", "-s", "fmses", "-x", "200", "-y", "50"}
	}
	args = append(args, "-n", "fm-"+k.id, "-c", wt, k.cmd)
	out, err := exec.Command("tmux", args...).Output()
	if err != nil {
		return fmt.Errorf("start tmux window for %s: %w", k.id, err)
	}
	ids := strings.Fields(string(out))
	if len(ids) != 3 {
		return fmt.Errorf("tmux printed %q, not a pane id, window id and pid", out)
	}
	k.pane = ids[0]
	meta := fmt.Sprintf("window=fmses:fm-%s\ntmux_pane_id=%s\ntmux_window_id=%s\ntmux_pane_pid=%s\nendpoint_task_id=%s\nworktree=%s\nproject=%s\nharness=%s\nkind=ship\nmodel=default\neffort=default\nspawn_gen=%s\n", k.id, ids[0], ids[1], ids[2], k.id, wt, wt, k.harness, benchGen)
	if err := os.WriteFile(filepath.Join(home, "state", k.id+".meta"), []byte(meta), 0o644); err != nil {
		return err
	}
	return k.awaitStart(1)
}

// benchGen is the spawn generation every bench task's record and wiring
// carry.
const benchGen = "bench1"

// wire gives the task the telemetry fm-spawn gives a real one: its
// harness's hooks (the fake agent runs claude's from the worktree's
// settings, and reports each turn's start and end through them) and an
// event key; it returns the key, for the agent's environment.
func (k *task) wire(wt string) (string, error) {
	h, ok := harness.Lookup(k.harness)
	if !ok {
		return "", fmt.Errorf("no harness %s", k.harness)
	}
	stateDir := filepath.Join(home, "state")
	w := harness.WiringTarget{FMControl: filepath.Join(binDir, "fm-control"), Home: home, ID: k.id, Gen: benchGen}
	if err := wiring.Install(h, wiring.Task{Worktree: wt, StateDir: stateDir, ID: k.id}, w); err != nil {
		return "", fmt.Errorf("wire %s: %w", k.id, err)
	}
	key, err := state.NewEventKey()
	if err != nil {
		return "", err
	}
	return key, state.Store{Dir: stateDir}.WriteEventKey(k.id, key)
}

// awaitStart waits for the fake agent's n-th start event.
func (k *task) awaitStart(n int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if data, _ := os.ReadFile(k.events); strings.Count(string(data), "start "+k.harness) >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the fake %s did not start", k.harness)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fresh restarts the fake agent in the same pane (same pane id), so a row
// starts from an empty composer and transcript.
func (k *task) fresh(b *testing.B) {
	data, _ := os.ReadFile(k.events)
	starts := strings.Count(string(data), "start "+k.harness)
	if err := exec.Command("tmux", "-L", socket, "respawn-pane", "-k", "-t", k.pane, k.cmd).Run(); err != nil {
		b.Fatalf("respawn the fake %s: %v", k.harness, err)
	}
	if err := k.awaitStart(starts + 1); err != nil {
		b.Fatal(err)
	}
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o755)
}

func env(trace string) []string { return envAt(home, socket, trace) }

// envAt points a binary at the FM_HOME fmHome and the tmux server sock.
func envAt(fmHome, sock, trace string) []string {
	e := append(os.Environ(), "FM_HOME="+fmHome, "FM_TMUX_SOCKET="+sock, "TMUX=")
	if trace != "" {
		e = append(e, "FM_RUNNER_TRACE="+trace)
	}
	return e
}

// run is one binary invocation: wall time, exit code, peak RSS.
type run struct {
	wall   time.Duration
	code   int
	rssKB  int64
	output string
}

func runBin(trace string, stdin []byte, name string, args ...string) run {
	return runBinEnv(env(trace), trace, stdin, name, args...)
}

// runBinEnv is runBin in the environment environ.
func runBinEnv(environ []string, trace string, stdin []byte, name string, args ...string) run {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	rssFile := ""
	if trace != "" && timeBin != "" {
		// Under GNU time, which forks its child from its own small process:
		// a process this one starts directly inherits this process's peak
		// RSS (the kernel keeps the larger of the pre- and post-exec peaks).
		rssFile = trace + ".rss"
		cmd = exec.Command(timeBin, append([]string{"-f", "%M", "-o", rssFile, filepath.Join(binDir, name)}, args...)...)
	}
	cmd.Env = environ
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	start := time.Now()
	out, _ := cmd.CombinedOutput()
	r := run{wall: time.Since(start), output: string(out), code: -1}
	if ps := cmd.ProcessState; ps != nil {
		r.code = ps.ExitCode()
	}
	if rssFile != "" {
		data, _ := os.ReadFile(rssFile)
		// GNU time writes "Command exited with non-zero status N" first
		// when the command failed; the figure is the last word.
		if f := strings.Fields(string(data)); len(f) > 0 {
			r.rssKB, _ = strconv.ParseInt(f[len(f)-1], 10, 64)
		}
		os.Remove(rssFile)
	}
	return r
}

// counts are what one traced invocation started.
type counts struct{ tmuxProcs, other int }

func traced(stdin []byte, name string, args ...string) (counts, run, error) {
	trace, r, err := tracedAt(home, socket, stdin, name, args...)
	return countCalls(trace), r, err
}

// tracedAt runs the binary against fmHome and the tmux server sock, and
// returns its runner trace: one line per external command it started.
func tracedAt(fmHome, sock string, stdin []byte, name string, args ...string) (string, run, error) {
	f, err := os.CreateTemp("", "fmbench-trace-")
	if err != nil {
		return "", run{}, err
	}
	f.Close()
	defer os.Remove(f.Name())
	r := runBinEnv(envAt(fmHome, sock, f.Name()), f.Name(), stdin, name, args...)
	data, err := os.ReadFile(f.Name())
	return string(data), r, err
}

// traceCalls are the lines of a runner trace: the program and its argv
// (Go-quoted) of each call.
func traceCalls(trace string) (calls [][2]string) {
	for _, line := range strings.Split(strings.TrimSpace(trace), "\n") {
		if parts := strings.SplitN(line, "\t", 3); len(parts) == 3 {
			calls = append(calls, [2]string{parts[1], parts[2]})
		}
	}
	return calls
}

func countCalls(trace string) counts {
	var c counts
	for _, call := range traceCalls(trace) {
		if filepath.Base(call[0]) == "tmux" {
			c.tmuxProcs++
		} else {
			c.other++
		}
	}
	return c
}

// bare is one plain tmux call, the unit every ratio is in. Its output is
// collected as a binary run's is (runBin), so both pay the same pipe and
// copy on this side of the call.
func bare() time.Duration {
	cmd := exec.Command("tmux", "-L", socket, "display-message", "-p", "-t", pane, "#{pane_id}")
	start := time.Now()
	_, _ = cmd.CombinedOutput()
	return time.Since(start)
}

// pairedSpread is the middle half of the runs' own ratios, each run over
// the bare call made right after it: how far one run of the bench can land
// from another on the same binary, so a goal is read against the noise.
func pairedSpread(walls, bares []time.Duration) (p25, p75 float64) {
	var rs []float64
	for i := range min(len(walls), len(bares)) {
		if bares[i] > 0 {
			rs = append(rs, float64(walls[i])/float64(bares[i]))
		}
	}
	if len(rs) == 0 {
		return 0, 0
	}
	sort.Float64s(rs)
	return rs[len(rs)/4], rs[len(rs)*3/4]
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64)
}

// op is one row of the table.
type op struct {
	label string
	name  string
	args  []string
	text  []byte // sent on stdin (fm-send <id> -), checked to arrive whole
	to    *task  // the task text goes to
	n     int
	// spaced: the operation ends with an Escape, after which the task's
	// next input waits out the 200 ms press gap (recorded in its input
	// lock), so each run starts after that gap: the row measures the verb,
	// not the wait its predecessor left for it.
	spaced bool
}

// escapeGap is the harness table's press gap, plus room.
const escapeGap = 250 * time.Millisecond

// measure runs the operation n times, each followed by one bare call, and
// returns its table row.
func measure(b *testing.B, windows int, o op) string {
	var c counts
	var walls, bares []time.Duration
	var rss int64
	codes := map[int]int{}
	whole := 0
	firstErr := ""
	for i := 0; i < o.n; i++ {
		var r run
		var err error
		if o.spaced {
			time.Sleep(escapeGap)
		}
		if i == 0 {
			// The first run is traced, for the process counts and the
			// peak RSS.
			c, r, err = traced(o.text, o.name, o.args...)
			if err != nil {
				b.Fatal(err)
			}
		} else {
			r = runBin("", o.text, o.name, o.args...)
		}
		walls = append(walls, r.wall)
		if o.spaced {
			// The bare call starts after the same pause as the run it is
			// the unit of: a call after 250 ms idle meets a sleeping tmux
			// server and cold caches, whatever made it.
			time.Sleep(escapeGap)
		}
		bares = append(bares, bare())
		if i == 0 {
			rss = r.rssKB
		}
		codes[r.code]++
		if r.code != 0 && firstErr == "" {
			firstErr, _, _ = strings.Cut(strings.TrimSpace(r.output), "\n")
			if len(firstErr) > 160 {
				firstErr = firstErr[:160] + "…"
			}
		}
		if o.text != nil && arrivedWhole(o.to, o.text) {
			whole++
		}
	}
	mo, mb := median(walls), median(bares)
	var parts []string
	for code, n := range codes {
		parts = append(parts, fmt.Sprintf("%d ×%d", code, n))
	}
	sort.Strings(parts)
	outcome := strings.Join(parts, ", ")
	if o.text != nil {
		outcome += fmt.Sprintf(", %d/%d whole", whole, o.n)
	}
	if firstErr != "" {
		outcome += ": " + strings.ReplaceAll(firstErr, "|", "/")
	}
	peak := "–"
	if rss > 0 {
		peak = fmt.Sprintf("%.1f MB", float64(rss)/1024)
	}
	lo, hi := pairedSpread(walls, bares)
	return fmt.Sprintf("| %s | %d | %s ms | %.2f× | %.2f–%.2f× | %d | %d | %s | %s |",
		o.label, windows, ms(mo), float64(mo)/float64(mb), lo, hi, c.tmuxProcs, c.other, peak, outcome)
}

// arrivedWhole reports whether k's agent's last submit is exactly text.
func arrivedWhole(k *task, text []byte) bool {
	data, err := os.ReadFile(k.events)
	if err != nil {
		return false
	}
	i := bytes.LastIndex(data, []byte("\nsubmit "))
	if i < 0 {
		return false
	}
	line, _, _ := bytes.Cut(data[i+len("\nsubmit "):], []byte("\n"))
	got, err := strconv.Unquote(string(line))
	want := strings.TrimRight(strings.ReplaceAll(string(text), "\r\n", "\n"), "\n")
	return err == nil && strings.TrimRight(strings.ReplaceAll(got, "\r", "\n"), "\n") == want
}

// message is n bytes of text in 100-byte lines, ending with a unique tail.
func message(n int, tag string) []byte {
	var buf bytes.Buffer
	line := strings.Repeat("lorem ipsum dolor sit amet ", 4)[:99] + "\n"
	tail := fmt.Sprintf("end of %s", tag)
	for buf.Len()+len(line)+len(tail) < n {
		buf.WriteString(line)
	}
	buf.WriteString(strings.Repeat("x", n-buf.Len()-len(tail)))
	buf.WriteString(tail)
	return buf.Bytes()
}

// addWindows grows the server to total windows (idle sleep panes).
func addWindows(b *testing.B, total int) {
	for i := 1; i < total; i++ {
		if err := exec.Command("tmux", "-L", socket, "new-window", "-d", "-t", "=fmses:", "-n", fmt.Sprintf("idle-%d", i), "sleep 100000").Run(); err != nil {
			b.Fatalf("new-window %d: %v", i, err)
		}
	}
}

func BenchmarkTable(b *testing.B) {
	small := []op{
		{label: "`fm-control interrupt t1`", name: "fm-control", args: []string{"interrupt", "t1"}, n: *iters, spaced: true},
		{label: "`fm-send t1 --key Escape`", name: "fm-send", args: []string{"t1", "--key", "Escape"}, n: *iters, spaced: true},
		{label: "`fm-send t1 hello` (10 B)", name: "fm-send", args: []string{"t1", "hello bench"}, n: *iters},
		{label: "`fm-control status t1`", name: "fm-control", args: []string{"status", "t1"}, n: *iters},
		{label: "`fm-control --version` (start-up)", name: "fm-control", args: []string{"--version"}, n: *iters},
	}
	rows := []string{
		"| operation | windows | median | ratio to one bare tmux call | run by run (p25–p75) | tmux processes | other processes | peak RSS | exit codes |",
		"|---|---|---|---|---|---|---|---|---|",
	}
	b.ResetTimer()
	for _, windows := range []int{1, 500} {
		if windows > 1 {
			addWindows(b, windows)
		}
		for _, o := range small {
			rows = append(rows, measure(b, windows, o))
		}
	}
	if *large {
		for _, size := range []struct {
			label string
			n     int
		}{{"64 KB", 64 << 10}, {"1 MB", 1_000_000}} {
			// claude, and codex, whose row is the same machinery without
			// claude's 150 ms paste settle.
			for _, k := range []*task{&claude, &codex} {
				k.fresh(b)
				o := op{label: fmt.Sprintf("`fm-send %s -` to %s (%s, twice in a row)", k.id, k.harness, size.label), name: "fm-send",
					args: []string{k.id, "-"}, text: message(size.n, size.label), to: k, n: 2}
				rows = append(rows, measure(b, 500, o))
			}
		}
	}
	b.StopTimer()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("\nload average before the table: %s\n%s\n", strings.TrimSpace(string(load)), strings.Join(rows, "\n"))
}
