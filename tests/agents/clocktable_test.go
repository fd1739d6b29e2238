package agents

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// clockSample is one watched call: when it began, when fmctl answered and
// when the agent acted (zero: no act evidence within the watch).
type clockSample struct {
	harness, verb      string
	start, answer, act time.Time
	evidence           string
	said               string // fmctl's answer, its first line
}

// slowAnswer is issue 39's p95 goal for fmctl's answer after the act: a
// call slower than it is listed with what fmctl said, which names what it
// waited for.
const slowAnswer = 500 * time.Millisecond

// clockVerbs is the table's row order.
var clockVerbs = []string{"send idle", "send busy", "interrupt", "interrupt: record", "exit", "exit: shell in front",
	"wait idle", "wait waiting", "spawn: composer", "spawn: prompt taken", "relaunch: prompt taken"}

// clockRow is one harness × verb of the latency table.
type clockRow struct {
	harness, verb string
	calls         int
	lag, own      []time.Duration // answer − act, and act − call start
	evidence      map[string]int
}

// rows groups the samples per harness × verb, in harness order as first
// seen and the verbs in clockVerbs' order.
func (c *agentClock) rows() []*clockRow {
	c.mu.Lock()
	defer c.mu.Unlock()
	per := map[[2]string]*clockRow{}
	var out []*clockRow
	for _, s := range c.samples {
		k := [2]string{s.harness, s.verb}
		r := per[k]
		if r == nil {
			r = &clockRow{harness: s.harness, verb: s.verb, evidence: map[string]int{}}
			per[k] = r
			out = append(out, r)
		}
		r.calls++
		if !s.act.IsZero() {
			r.lag = append(r.lag, s.answer.Sub(s.act))
			r.own = append(r.own, s.act.Sub(s.start))
			r.evidence[s.evidence]++
		}
	}
	var harnesses []string
	for _, r := range out {
		if !slices.Contains(harnesses, r.harness) {
			harnesses = append(harnesses, r.harness)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		hi, hj := slices.Index(harnesses, out[i].harness), slices.Index(harnesses, out[j].harness)
		if hi != hj {
			return hi < hj
		}
		return slices.Index(clockVerbs, out[i].verb) < slices.Index(clockVerbs, out[j].verb)
	})
	return out
}

// cells is a row's columns: calls, n, the lag's median and p95, the
// agent's own part's median and p95, and the evidence.
func (r *clockRow) cells() []string {
	n := len(r.lag)
	if n == 0 {
		return []string{fmt.Sprint(r.calls), "0", "—, no act evidence", "", "", "", ""}
	}
	return []string{fmt.Sprint(r.calls), fmt.Sprint(n),
		fmtLag(quantile(r.lag, 0.5)), fmtLag(quantile(r.lag, 0.95)),
		fmtLag(quantile(r.own, 0.5)), fmtLag(quantile(r.own, 0.95)), r.evidenceText()}
}

func (r *clockRow) evidenceText() string {
	var kinds []string
	for k := range r.evidence {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return r.evidence[kinds[i]] > r.evidence[kinds[j]] })
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%s ×%d", k, r.evidence[k])
	}
	return strings.Join(kinds, "; ")
}

// quantile is the nearest-rank quantile q of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*q+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// fmtLag prints a duration to the millisecond, signed: a negative lag is
// an answer that came before the act.
func fmtLag(d time.Duration) string {
	if d >= 10*time.Second || d <= -10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

var clockHeader = []string{"harness", "verb", "calls", "n", "answer−act median", "p95", "agent's part median", "p95", "act evidence"}

// print writes the latency table to the tier's log.
func (c *agentClock) print(w io.Writer) {
	rows := c.rows()
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "real-agent tier: latency against the agent's clock (answer−act: fmctl's answer after the agent acted; agent's part: call start to the act; docs/performance.md)")
	line := "real-agent tier: latency %-9s %-22s %5s %3s %18s %9s %19s %9s  %s\n"
	h := clockHeader
	fmt.Fprintf(w, line, h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8])
	for _, r := range rows {
		cl := r.cells()
		fmt.Fprintf(w, line, r.harness, r.verb, cl[0], cl[1], cl[2], cl[3], cl[4], cl[5], cl[6])
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.samples {
		if lag := s.answer.Sub(s.act); !s.act.IsZero() && lag > slowAnswer {
			fmt.Fprintf(w, "real-agent tier: latency slow %s %s: answered %s after the act (%s), %s into the call: %s\n",
				s.harness, s.verb, fmtLag(lag), s.evidence, fmtLag(s.act.Sub(s.start)), s.said)
		}
	}
}

// markdown renders the latency table for a report file.
func (c *agentClock) markdown() string {
	rows := c.rows()
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nLatency against the agent's clock (docs/performance.md):\n")
	b.WriteString("\n| " + strings.Join(clockHeader, " | ") + " |\n|" + strings.Repeat("---|", len(clockHeader)) + "\n")
	for _, r := range rows {
		b.WriteString("| " + r.harness + " | " + r.verb + " | " + strings.Join(r.cells(), " | ") + " |\n")
	}
	return b.String()
}
