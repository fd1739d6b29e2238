package remotessh

import (
	"sort"
	"testing"
	"time"
)

// BenchmarkRemoteVerbOverhead is what a <host>/<id> adds to a verb: the
// median of `fm-control status h1/t1` over the held master against the same
// status run on the host directly, on loopback. Each op is one invocation,
// as a user's.
func BenchmarkRemoteVerbOverhead(b *testing.B) {
	f := newFleet(b)
	h := f.addHost("h1")
	h.startAgent("t1")
	hostEnv := []string{"FM_HOME=" + h.home, "FM_TMUX_SOCKET=" + h.sock}
	wantCode(f.t, f.run(30*time.Second, nil, "fm-control", "status", "h1/t1"), 0, "warm-up: the master")
	const n = 15
	var local, remote []time.Duration
	for range max(1, b.N) {
		for range n {
			r := f.run(30*time.Second, hostEnv, "fm-control", "status", "t1")
			wantCode(f.t, r, 0, "status on the host")
			local = append(local, r.elapsed)
			r = f.run(30*time.Second, nil, "fm-control", "status", "h1/t1")
			wantCode(f.t, r, 0, "status h1/t1")
			remote = append(remote, r.elapsed)
		}
	}
	l, r := median(local), median(remote)
	b.ReportMetric(float64(l.Microseconds())/1000, "ms-local")
	b.ReportMetric(float64(r.Microseconds())/1000, "ms-remote")
	b.ReportMetric(float64((r-l).Microseconds())/1000, "ms-overhead")
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
