package control

import (
	"fmt"
	"strings"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
)

// printStatusView is status on a terminal: the outcome's facts as a few
// aligned lines for a person, grouped as what the task is, where it runs,
// what its agent is doing and what said so; piped or under --json it
// stays the one line or object scripts read. detail, the backend's words
// for the endpoint's state, is shown when the state is not plainly alive.
func printStatusView(p cli.Printer, o cli.Outcome, detail string) error {
	get := func(k string) string { return oneLine(o.Get(k)) }
	harness := get("harness")
	if rec := get("recorded_harness"); rec != harness {
		harness += " (recorded " + rec + ")"
	}
	state := get("state")
	if get("server") == "gone" {
		state += ", its multiplexer server gone or restarted"
	}
	if get("classifier") == "none" {
		state += ", no classifier"
	}
	if s := get("agent_status"); s != "" {
		state += ", agent status " + s
	}
	activity := get("activity")
	if f := get("waiting_for"); f != "" {
		activity += ", waiting for " + f
	}
	if get("attention") == attentionStalled {
		activity += ", stalled: no progress for " + get("stalled_for_s")
	}
	activity += " (evidence: " + get("evidence")
	if n := get("events_refused"); n != "0" {
		activity += "; " + n + " events refused"
	}
	activity += ")"
	journal := get("journal")
	if r := get("rollback"); r != "" {
		journal += ", rollback " + r
	}
	rows := [][]string{
		{"task", o.ID + ", " + get("kind")},
		{"harness", harness},
		{"profile", fmt.Sprintf("model %s, effort %s, permissions %s", get("model"), get("effort"), get("permissions"))},
		{"endpoint", get("backend") + " " + get("endpoint")},
		{"worktree", get("worktree")},
		{"state", state},
		{"activity", activity},
		{"journal", journal},
	}
	if detail != "" && o.Get("state") != string(backends.StateAlive) {
		rows = append(rows, []string{"why", strings.TrimSpace(oneLine(detail))})
	}
	return cli.WriteTable(p.Out, p.Width, nil, rows)
}
