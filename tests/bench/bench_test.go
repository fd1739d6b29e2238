// Package bench measures the binaries on a private real tmux server with a
// fake agent, side by side with the bare tmux calls each operation needs. Each
// benchmark reports its median, its ratio to the bare calls (the same argv
// the binary's runner recorded, replayed as plain tmux invocations), and the
// tmux invocations and child processes per operation.
//
//	make bench   (go test -run '^$' -bench . -benchtime 20x ./tests/bench/)
package bench

import (
	"flag"
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
	binDir string
	socket string
	home   string
	events string
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
	root, err := moduleRoot()
	if err != nil {
		return 0, err
	}
	for _, b := range [][2]string{{"./cmd/...", binDir + "/"}, {"./tests/fakeagent", filepath.Join(dir, "agents", "claude")}} {
		cmd := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", b[1], b[0])
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go build %s: %v\n%s", b[0], err, out)
		}
	}
	home = filepath.Join(dir, "home")
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
	events = filepath.Join(dir, "events.log")
	agent := filepath.Join(dir, "agents", "claude")
	shell := "bash --norc --noprofile"
	if err := exec.Command("tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "fmses", "-n", "fm-t1",
		"-x", "200", "-y", "50", "-c", wt, "-e", "FAKEAGENT_EVENTS="+events,
		shell+" -c '"+agent+"; exec "+shell+"'").Run(); err != nil {
		return 0, fmt.Errorf("start tmux: %w", err)
	}
	defer exec.Command("tmux", "-L", socket, "kill-server").Run()
	meta := fmt.Sprintf("window=fmses:fm-t1\nendpoint_task_id=t1\nworktree=%s\nproject=%s\nharness=claude\nkind=ship\nmodel=default\neffort=default\n", wt, wt)
	if err := os.WriteFile(filepath.Join(home, "state", "t1.meta"), []byte(meta), 0o644); err != nil {
		return 0, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if data, _ := os.ReadFile(events); strings.Contains(string(data), "start claude") {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the fake agent did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return m.Run(), nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

func env(trace string) []string {
	e := append(os.Environ(), "FM_HOME="+home, "FM_TMUX_SOCKET="+socket, "TMUX=")
	if trace != "" {
		e = append(e, "FM_RUNNER_TRACE="+trace)
	}
	return e
}

// runBin runs one binary invocation and returns its wall time.
func runBin(b *testing.B, trace string, name string, args ...string) time.Duration {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = env(trace)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return d
}

// traced runs the operation once with the runner trace on and returns the
// argv of every child process it started.
func traced(b *testing.B, name string, args ...string) [][]string {
	f := filepath.Join(b.TempDir(), "trace")
	runBin(b, f, name, args...)
	data, err := os.ReadFile(f)
	if err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
	var calls [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		calls = append(calls, append([]string{parts[1]}, parseGoSlice(parts[2])...))
	}
	return calls
}

// parseGoSlice reads the %q rendering of a []string: ["a" "b"].
func parseGoSlice(s string) []string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	var out []string
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ")
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			break
		}
		v, _ := strconv.Unquote(q)
		out = append(out, v)
		s = s[len(q):]
	}
	return out
}

// replay runs the recorded calls as bare processes: the floor the binary's
// own work sits on.
func replay(b *testing.B, calls [][]string) time.Duration {
	start := time.Now()
	for _, c := range calls {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Env = env("")
		_ = cmd.Run() // stdin-fed calls (paste) fail here harmlessly; they still cost a process
	}
	return time.Since(start)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchOp measures one operation against the bare replay of its calls.
func benchOp(b *testing.B, name string, args ...string) {
	calls := traced(b, name, args...)
	tmuxCalls := 0
	for _, c := range calls {
		if filepath.Base(c[0]) == "tmux" {
			tmuxCalls++
		}
	}
	var op, bare []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op = append(op, runBin(b, "", name, args...))
		b.StopTimer()
		bare = append(bare, replay(b, calls))
		b.StartTimer()
	}
	b.StopTimer()
	mo, mb := median(op), median(bare)
	b.ReportMetric(ms(mo), "median-ms")
	if len(calls) > 0 {
		b.ReportMetric(ms(mb), "bare-median-ms")
		b.ReportMetric(float64(mo)/float64(mb), "ratio-to-bare")
	}
	b.ReportMetric(float64(tmuxCalls), "tmux-calls/op")
	b.ReportMetric(float64(len(calls)), "child-procs/op")
}

func BenchmarkInterrupt(b *testing.B) { benchOp(b, "fm-control", "interrupt", "t1") }

func BenchmarkKeyEscape(b *testing.B) { benchOp(b, "fm-send", "t1", "--key", "Escape") }

func BenchmarkSendHello(b *testing.B) { benchOp(b, "fm-send", "t1", "hello") }

func BenchmarkVersion(b *testing.B) { benchOp(b, "fm-control", "--version") }

// The bare calls on their own, for the table in docs/performance.md.
func benchBare(b *testing.B, args ...string) {
	var ds []time.Duration
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("tmux", append([]string{"-L", socket}, args...)...)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("tmux %v: %v %s", args, err, out)
		}
		ds = append(ds, time.Since(start))
	}
	b.ReportMetric(ms(median(ds)), "median-ms")
}

func BenchmarkBareSendKeys(b *testing.B) { benchBare(b, "send-keys", "-t", "=fmses:=fm-t1", "C-u") }

func BenchmarkBareDisplayMessage(b *testing.B) {
	benchBare(b, "display-message", "-p", "-t", "=fmses:=fm-t1", "#{pane_id}")
}
