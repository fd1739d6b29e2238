package remotessh

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
// login shell paid every time). Beside them, the bound issue 39 sets on
// the overhead: one process start (`fm-control --version`) plus one ssh
// round trip over the same held master (`ssh h1 true`, run by the host's
// shell as every ssh command is). Each op is one invocation, as a user's;
// the four are interleaved, so a load that comes and goes weighs on each
// alike.
func BenchmarkRemoteVerbOverhead(b *testing.B) {
	f := newFleet(b)
	h := f.addHost("h1")
	h.startAgent("t1")
	hostEnv := []string{"FM_HOME=" + h.Home, "FM_TMUX_SOCKET=" + h.sock}
	noKeeper := []string{"FM_HOSTS_KEEP=0"}
	wantCode(f.T, f.run(30*time.Second, nil, "fm-control", "status", "h1/t1"), 0, "warm-up: the master and the keeper")
	master := f.master(h)
	const n = 15
	var local, kept, direct, bound []time.Duration
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
			r = f.run(30*time.Second, nil, "fm-control", "--version")
			wantCode(f.T, r, 0, "fm-control --version")
			bound = append(bound, r.elapsed+f.sshRoundTrip(h, master))
		}
	}
	l, k, d, o := median(local), median(kept), median(direct), median(bound)
	b.ReportMetric(ms(l), "ms-local")
	b.ReportMetric(ms(k), "ms-remote")
	b.ReportMetric(ms(k-l), "ms-overhead")
	b.ReportMetric(ms(d-l), "ms-overhead-no-keeper")
	b.ReportMetric(ms(o), "ms-start+ssh")
	b.ReportMetric(float64(k-l)/float64(o), "overhead/bound")
}

// master is the control socket of h's held ssh master, which the fleet's
// calls made.
func (f *fleet) master(h *host) string {
	f.T.Helper()
	paths, _ := filepath.Glob(filepath.Join(f.Runtime, "fmctl-ssh", "h-*"))
	for _, p := range paths {
		if exec.Command("ssh", "-F", f.SSHConfig, "-o", "ControlPath="+p, "-O", "check", h.Name).Run() == nil {
			return p
		}
	}
	f.T.Fatalf("no held ssh master of %s among %q", h.Name, paths)
	return ""
}

// sshRoundTrip is one `ssh <host> true` over the held master: a session
// opened on the connection, the host's shell run, its exit status back.
func (f *fleet) sshRoundTrip(h *host, master string) time.Duration {
	f.T.Helper()
	start := time.Now()
	out, err := exec.Command("ssh", "-F", f.SSHConfig, "-o", "ControlPath="+master, "-o", "ControlMaster=no",
		"-o", "BatchMode=yes", "-T", h.Name, "true").CombinedOutput()
	elapsed := time.Since(start)
	if err != nil {
		f.T.Fatalf("ssh %s true over the master: %v\n%s", h.Name, err, out)
	}
	return elapsed
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkListAllHosts is one fleet view of 8 hosts of 50 tasks each:
// the median of `fm-control list --all-hosts` (every host asked at once,
// through its keeper) against the slowest host's own `fm-control list` of
// its 50 (the largest of the hosts' medians), the bound issue 39 sets at
// 1.5×; and the sum of the hosts' medians, what asking them one after
// another would cost. A task's window runs a sleep, which reads
// unattributed, so the rows are real records and panes without 400 agents
// to start. Every host's sshd, serve and tmux share this machine's cores,
// so it also reports the processor time one host's list takes, and that
// times the hosts over the cores: the floor the fleet view cannot beat
// here, however parallel.
func BenchmarkListAllHosts(b *testing.B) {
	const hosts, tasks, n = 8, 50, 9
	f := newFleet(b)
	all := f.sleeperHosts(hosts, tasks)
	warm := f.run(2*time.Minute, nil, "fm-control", "list", "--all-hosts")
	wantCode(f.T, warm, 0, "warm-up: every host's master and keeper")
	for _, h := range all {
		for j := range tasks {
			if prefix := fmt.Sprintf("%s/t%02d: host=%s ", h.Name, j, h.Name); !containsLine(warm.stdout, prefix, "harness=claude") {
				f.T.Fatalf("list --all-hosts printed no row %q:\n%s", prefix, warm.stdout)
			}
		}
	}
	local := make([][]time.Duration, hosts)
	var fleetList, cpu []time.Duration
	for range max(1, b.N) {
		for range n {
			for i, h := range all {
				r := f.run(time.Minute, []string{"FM_HOME=" + h.Home, "FM_TMUX_SOCKET=" + h.sock}, "fm-control", "list")
				wantCode(f.T, r, 0, "list on "+h.Name)
				if got := strings.Count(r.stdout, "harness=claude"); got != tasks {
					f.T.Fatalf("list on %s printed %d rows, want %d:\n%s", h.Name, got, tasks, r.stdout)
				}
				local[i], cpu = append(local[i], r.elapsed), append(cpu, r.cpu)
			}
			r := f.run(2*time.Minute, nil, "fm-control", "list", "--all-hosts")
			wantCode(f.T, r, 0, "list --all-hosts")
			fleetList = append(fleetList, r.elapsed)
		}
	}
	var slowest, sum time.Duration
	for _, runs := range local {
		m := median(runs)
		slowest, sum = max(slowest, m), sum+m
	}
	a := median(fleetList)
	b.ReportMetric(ms(slowest), "ms-slowest-host-50")
	b.ReportMetric(ms(sum), "ms-hosts-one-by-one")
	b.ReportMetric(ms(a), "ms-8-hosts-400")
	b.ReportMetric(float64(a)/float64(slowest), "ratio-to-slowest")
	// The processor time of one host's list (its tmux clients' included,
	// the tmux server's not), times the hosts, over the cores: the least
	// the fleet view can take when every host's work shares them.
	b.ReportMetric(ms(median(cpu)), "ms-cpu-one-host")
	b.ReportMetric(ms(median(cpu)*hosts/time.Duration(runtime.NumCPU())), "ms-cpu-floor")
}

// BenchmarkListAllHostsOverLatency is the fleet view with each host
// behind a link of added latency (this machine's kernel has no netem, so
// a proxy in front of each sshd delivers every chunk a fixed delay after
// it came): 8 hosts of 50 tasks, at round trips of 20, 50 and 100 ms.
// Against each `list --all-hosts` over all eight it times the same call
// with hosts.toml naming one host at a time, over the same link and held
// master: a host's list as the controller gets it. When the hosts are
// asked at once the fleet costs about its slowest host; one after another
// it would cost their sum, which the bench reports too.
func BenchmarkListAllHostsOverLatency(b *testing.B) {
	const hosts, tasks, n = 8, 50, 7
	f := newFleet(b)
	all := f.sleeperHosts(hosts, tasks)
	var links []*proxy
	for _, h := range all {
		links = append(links, f.behindProxy(h))
	}
	hostsTOML := filepath.Join(f.Home, "config", "hosts.toml")
	everyHost := readFile(hostsTOML)
	oneHost := func(h *host) string {
		return fmt.Sprintf("[hosts.%s]\nssh = %q\nhome = %q\nbin = %q\n", h.Name, h.Name, h.Home, h.Bin)
	}
	list := func(what string, rows int) time.Duration {
		r := f.run(2*time.Minute, nil, "fm-control", "list", "--all-hosts")
		wantCode(f.T, r, 0, what)
		if got := strings.Count(r.stdout, "harness=claude"); got != rows {
			f.T.Fatalf("%s printed %d rows, want %d:\n%s", what, got, rows, r.stdout)
		}
		return r.elapsed
	}
	for _, oneWay := range []time.Duration{10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond} {
		for _, l := range links {
			l.set(oneWay, false)
		}
		writeFile(f.T, hostsTOML, everyHost)
		list("warm-up: every host's master and keeper", hosts*tasks)
		single := make([][]time.Duration, hosts)
		var fleetView []time.Duration
		for range max(1, b.N) * n {
			for i, h := range all {
				writeFile(f.T, hostsTOML, oneHost(h))
				single[i] = append(single[i], list("list --all-hosts of "+h.Name+" alone", tasks))
			}
			writeFile(f.T, hostsTOML, everyHost)
			fleetView = append(fleetView, list("list --all-hosts", hosts*tasks))
		}
		var slowest, sum time.Duration
		for _, runs := range single {
			m := median(runs)
			slowest, sum = max(slowest, m), sum+m
		}
		a, rtt := median(fleetView), fmt.Sprintf("rtt%d", 2*oneWay.Milliseconds())
		b.ReportMetric(ms(slowest), "ms-slowest-host-"+rtt)
		b.ReportMetric(ms(sum), "ms-one-by-one-"+rtt)
		b.ReportMetric(ms(a), "ms-8-hosts-"+rtt)
		b.ReportMetric(float64(a)/float64(slowest), "ratio-"+rtt)
	}
}

// behindProxy puts a proxy on the path to h: its ssh config's port is the
// proxy's from now on, which the host key is trusted at too. Connections
// already made keep their direct path.
func (f *fleet) behindProxy(h *host) *proxy {
	f.T.Helper()
	p := f.trustedProxy(h)
	conf := readFile(f.SSHConfig)
	direct := fmt.Sprintf("  Port %d\n", h.Port)
	if strings.Count(conf, direct) != 1 {
		f.T.Fatalf("the ssh config names port %d %d times, want once:\n%s", h.Port, strings.Count(conf, direct), conf)
	}
	writeFile(f.T, f.SSHConfig, strings.Replace(conf, direct, fmt.Sprintf("  Port %d\n", p.port()), 1))
	return p
}

// sleeperHosts starts hosts h1..hN, each with tasks t00.. of sleeperTask.
func (f *fleet) sleeperHosts(hosts, tasks int) []*host {
	f.T.Helper()
	var all []*host
	for i := range hosts {
		h := f.addHost(fmt.Sprintf("h%d", i+1))
		all = append(all, h)
		for j := range tasks {
			h.sleeperTask(fmt.Sprintf("t%02d", j))
		}
	}
	return all
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
