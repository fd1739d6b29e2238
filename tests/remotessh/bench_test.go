package remotessh

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkRemoteVerbOverhead is what a <host>/<id> adds to a verb: the
// median of `fm-control status h1/t1` through the host's keeper (one serve
// held across invocations) against the same status run on the host
// directly, on loopback; and, for comparison, with FM_HOSTS_KEEP=0, each
// invocation starting a serve of its own over the held master (the remote
// login shell paid every time). Each op is one invocation, as a user's;
// the three are interleaved, so a load that comes and goes weighs on each
// alike.
func BenchmarkRemoteVerbOverhead(b *testing.B) {
	f := newFleet(b)
	h := f.addHost("h1")
	h.startAgent("t1")
	hostEnv := []string{"FM_HOME=" + h.Home, "FM_TMUX_SOCKET=" + h.sock}
	noKeeper := []string{"FM_HOSTS_KEEP=0"}
	wantCode(f.T, f.run(30*time.Second, nil, "fm-control", "status", "h1/t1"), 0, "warm-up: the master and the keeper")
	const n = 15
	var local, kept, direct []time.Duration
	for range max(1, b.N) {
		for range n {
			r := f.run(30*time.Second, hostEnv, "fm-control", "status", "t1")
			wantCode(f.T, r, 0, "status on the host")
			local = append(local, r.elapsed)
			r = f.run(30*time.Second, nil, "fm-control", "status", "h1/t1")
			wantCode(f.T, r, 0, "status h1/t1")
			kept = append(kept, r.elapsed)
			r = f.run(30*time.Second, noKeeper, "fm-control", "status", "h1/t1")
			wantCode(f.T, r, 0, "status h1/t1 without a keeper")
			direct = append(direct, r.elapsed)
		}
	}
	l, k, d := median(local), median(kept), median(direct)
	b.ReportMetric(ms(l), "ms-local")
	b.ReportMetric(ms(k), "ms-remote")
	b.ReportMetric(ms(k-l), "ms-overhead")
	b.ReportMetric(ms(d-l), "ms-overhead-no-keeper")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkListAllHosts is one fleet view of 8 hosts of 50 tasks each:
// the median of `fm-control list --all-hosts` (every host asked at once,
// through its keeper) against one host's own `fm-control list` of its 50.
// A task's window runs a sleep, which reads unattributed, so the rows are
// real records and panes without 400 agents to start.
func BenchmarkListAllHosts(b *testing.B) {
	const hosts, tasks, n = 8, 50, 9
	f := newFleet(b)
	var first *host
	for i := range hosts {
		h := f.addHost(fmt.Sprintf("h%d", i+1))
		if first == nil {
			first = h
		}
		for j := range tasks {
			h.sleeperTask(fmt.Sprintf("t%02d", j))
		}
	}
	hostEnv := []string{"FM_HOME=" + first.Home, "FM_TMUX_SOCKET=" + first.sock}
	warm := f.run(2*time.Minute, nil, "fm-control", "list", "--all-hosts")
	wantCode(f.T, warm, 0, "warm-up: every host's master and keeper")
	if got := strings.Count(warm.stdout, "\n"); got < hosts*tasks {
		f.T.Fatalf("list --all-hosts printed %d lines for %d tasks:\n%s", got, hosts*tasks, warm.stdout)
	}
	var local, all []time.Duration
	for range max(1, b.N) {
		for range n {
			r := f.run(time.Minute, hostEnv, "fm-control", "list")
			wantCode(f.T, r, 0, "list on one host")
			local = append(local, r.elapsed)
			r = f.run(2*time.Minute, nil, "fm-control", "list", "--all-hosts")
			wantCode(f.T, r, 0, "list --all-hosts")
			all = append(all, r.elapsed)
		}
	}
	b.ReportMetric(ms(median(local)), "ms-one-host-50")
	b.ReportMetric(ms(median(all)), "ms-8-hosts-400")
}

// sleeperTask is a record and a window for task id whose pane runs a sleep.
func (h *host) sleeperTask(id string) {
	h.T.Helper()
	wt := filepath.Join(h.Dir, "wt-"+id)
	if err := os.MkdirAll(wt, 0o755); err != nil {
		h.T.Fatal(err)
	}
	created := strings.Fields(h.tmux("new-window", "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}", "-t", "=fmses:",
		"-n", "fm-"+id, "-c", wt, "--", "sleep", "3600"))
	if len(created) != 3 {
		h.T.Fatalf("new-window printed %q", created)
	}
	writeFile(h.T, filepath.Join(h.Home, "state", id+".meta"), strings.Join([]string{
		"window=fmses:fm-" + id, "tmux_pane_id=" + created[0], "tmux_window_id=" + created[1], "tmux_pane_pid=" + created[2],
		"endpoint_task_id=" + id, "worktree=" + wt, "project=" + wt, "harness=claude", "kind=ship",
		"model=default", "effort=default", "spawn_gen=rs1"}, "\n")+"\n")
}
