package remotessh

import (
	"sort"
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
	hostEnv := []string{"FM_HOME=" + h.home, "FM_TMUX_SOCKET=" + h.sock}
	noKeeper := []string{"FM_HOSTS_KEEP=0"}
	wantCode(f.t, f.run(30*time.Second, nil, "fm-control", "status", "h1/t1"), 0, "warm-up: the master and the keeper")
	const n = 15
	var local, kept, direct []time.Duration
	for range max(1, b.N) {
		for range n {
			r := f.run(30*time.Second, hostEnv, "fm-control", "status", "t1")
			wantCode(f.t, r, 0, "status on the host")
			local = append(local, r.elapsed)
			r = f.run(30*time.Second, nil, "fm-control", "status", "h1/t1")
			wantCode(f.t, r, 0, "status h1/t1")
			kept = append(kept, r.elapsed)
			r = f.run(30*time.Second, noKeeper, "fm-control", "status", "h1/t1")
			wantCode(f.t, r, 0, "status h1/t1 without a keeper")
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
