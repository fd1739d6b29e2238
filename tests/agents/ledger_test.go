package agents

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// Verdict is what one scenario showed about fmctl against a real agent.
type Verdict string

const (
	// Backed: every exit 0 fmctl printed is backed by the agent's record.
	Backed Verdict = "backed"
	// Honest: fmctl refused or reported unconfirmed, and nothing it said was
	// false (what it called unsent is absent from the record).
	Honest Verdict = "honest"
	// False: fmctl claimed something the agent's record contradicts.
	False Verdict = "FALSE"
	// Broken: the scenario could not reach the state it needs (setup failed).
	Broken Verdict = "broken"
)

// outcome is one scenario's verdict with the facts behind it.
type outcome struct {
	harness, scenario string
	verdict           Verdict
	notes             []string // what fmctl printed and what the record said
	known             string   // the known gap this matches, when it is one
	ineffective       bool     // honest, but the verb's purpose was not achieved
}

// ledger collects every scenario's outcome for the closing table.
type ledger struct {
	mu      sync.Mutex
	rows    []outcome
	aborted []string // groups that failed outside a scenario's verdict
}

// abort records that test (a group) failed with msg, or with no message when
// only its end saw it failed, while scenario was running ("" between them).
// A group named twice keeps its first line, the one with the cause.
func (l *ledger) abort(test, scenario, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.aborted {
		if strings.HasPrefix(a, test+" ") {
			return
		}
	}
	line := test + " failed"
	if scenario != "" {
		line += " during scenario " + scenario
	}
	if msg != "" {
		line += ": " + oneLine(msg)
	}
	l.aborted = append(l.aborted, line)
}

// printFailures repeats, last of all, what failed: a CI log keeps only its
// head and tail, and the tail must name the failure.
func (l *ledger) printFailures(w io.Writer) {
	for _, o := range l.sorted() {
		if (o.verdict == False || o.verdict == Broken) && o.known == "" {
			fmt.Fprintf(w, "real-agent tier: %s %s/%s: %s\n", o.verdict, o.harness, o.scenario, strings.Join(o.notes, "; "))
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.aborted {
		fmt.Fprintf(w, "real-agent tier: FAILED %s\n", a)
	}
}

func newLedger() *ledger { return &ledger{} }

func (l *ledger) add(o outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows = append(l.rows, o)
}

func (l *ledger) sorted() []outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	rows := append([]outcome(nil), l.rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].harness < rows[j].harness })
	return rows
}

// print writes the closing table: one line per scenario.
func (l *ledger) print(w io.Writer) {
	rows := l.sorted()
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nreal-agent tier: scenario outcomes")
	counts := map[Verdict]int{}
	for _, o := range rows {
		mark := string(o.verdict)
		if o.ineffective {
			mark += " ineffective"
		}
		if o.known != "" {
			mark += " (known gap: " + o.known + ")"
		}
		fmt.Fprintf(w, "  %-9s %-28s %s\n", o.harness, o.scenario, mark)
		for _, n := range o.notes {
			fmt.Fprintf(w, "  %-9s %-28s   %s\n", "", "", n)
		}
		counts[o.verdict]++
	}
	ineffective := 0
	for _, o := range rows {
		if o.ineffective {
			ineffective++
			fmt.Fprintf(w, "real-agent tier: ineffective %s/%s: %s\n", o.harness, o.scenario, strings.Join(o.notes, "; "))
		}
	}
	l.printMatrix(w, "", rows)
	// The outage world's own line per harness (issue 38's table).
	var outage []outcome
	for _, o := range rows {
		if strings.HasPrefix(o.scenario, "outage-") {
			outage = append(outage, o)
		}
	}
	if len(outage) > 0 {
		l.printMatrix(w, "outage ", outage)
	}
	fmt.Fprintf(w, "real-agent tier: %d backed, %d honest, %d false, %d broken, %d ineffective\n",
		counts[Backed], counts[Honest], counts[False], counts[Broken], ineffective)
}

// printMatrix writes one line per harness: its verdicts and ineffective
// outcomes, counted over rows, each line headed by title.
func (l *ledger) printMatrix(w io.Writer, title string, rows []outcome) {
	type tally struct{ backed, honest, false_, broken, ineffective int }
	per := map[string]*tally{}
	var names []string
	for _, o := range rows {
		t := per[o.harness]
		if t == nil {
			t = &tally{}
			per[o.harness] = t
			names = append(names, o.harness)
		}
		switch o.verdict {
		case Backed:
			t.backed++
		case Honest:
			t.honest++
		case False:
			t.false_++
		case Broken:
			t.broken++
		}
		if o.ineffective {
			t.ineffective++
		}
	}
	fmt.Fprintf(w, "real-agent tier: %s%-9s %6s %6s %6s %6s %11s\n", title, "harness", "backed", "honest", "FALSE", "broken", "ineffective")
	for _, n := range names {
		t := per[n]
		fmt.Fprintf(w, "real-agent tier: %s%-9s %6d %6d %6d %6d %11d\n", title, n, t.backed, t.honest, t.false_, t.broken, t.ineffective)
	}
}

// markdown renders the table for a report file.
func (l *ledger) markdown() string {
	var b strings.Builder
	b.WriteString("| harness | scenario | verdict | facts |\n|---|---|---|---|\n")
	for _, o := range l.sorted() {
		v := string(o.verdict)
		if o.ineffective {
			v += " ineffective"
		}
		if o.known != "" {
			v += " (known: " + o.known + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", o.harness, o.scenario, v,
			strings.ReplaceAll(strings.Join(o.notes, "; "), "|", `\|`))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.aborted {
		fmt.Fprintf(&b, "\nFAILED %s\n", a)
	}
	return b.String()
}
