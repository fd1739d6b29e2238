package control

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/lifecycle"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/state"
)

// testWaits are the control plane's default waits (launch 90 s, report
// lag 15 s).
var testWaits = lifecycle.ReadWaits(config.DefaultTunables().Control)

// activityTarget is a claude task whose record names gen, with optional
// agent-state and busy-state files.
func activityTarget(t *testing.T, name, gen, report, busy string) *task.Target {
	t.Helper()
	dir := t.TempDir()
	var rec state.Record
	rec.Set(state.KeySpawnGen, gen)
	h, _ := harness.Lookup(name)
	tg := &task.Target{ID: "t1", Store: state.Store{Dir: dir}, Task: &state.Task{ID: "t1", Record: rec}, Harness: h, HasHarness: true}
	write := func(file, data string) {
		if data != "" {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("t1.agent-state", report)
	write("t1.busy-state", busy)
	return tg
}

// The one vocabulary, decided from the endpoint first and the agent's own
// word second: nothing is idle without a report (or the multiplexer's own
// reading) that says so.
func TestReadActivityIsNeverIdleWithoutEvidence(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	fresh := "s" + strconv.FormatInt(now.Add(-5*time.Second).Unix(), 10) + ".1"
	stale := "s" + strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10) + ".1"
	idle := "state=idle\ngen=" + fresh + "\n"
	alive := backends.Observation{State: backends.StateAlive}
	cases := []struct {
		name          string
		harness, gen  string
		report, busy  string
		obs           backends.Observation
		word, evident string
	}{
		{"report idle", "claude", fresh, idle, "", alive, actIdle, evTelemetry},
		{"report of another gen", "claude", stale, idle, "", alive, actUnknown, evNone},
		{"ended but still there", "claude", fresh, "state=ended\ngen=" + fresh + "\n", "", alive, actUnknown, evTelemetry},
		{"no report, just launched", "claude", fresh, "", "", alive, actStarting, evLaunch},
		{"no report, long launched", "claude", stale, "", "", alive, actUnknown, evNone},
		{"unwired harness", "grok", fresh, "", "", alive, actUnknown, evNone},
		{"legacy busy", "claude", stale, "", "busy\n", alive, actBusy, evBusyState},
		{"legacy idle is no proof", "claude", stale, "", "idle\n", alive, actUnknown, evNone},
		{"herdr working", "claude", stale, "", "", backends.Observation{State: backends.StateAlive, Turn: backends.TurnWorking}, actBusy, evStatus},
		{"dead endpoint", "claude", fresh, idle, "", backends.Observation{State: backends.StateDead}, actDead, evEndpoint},
		{"gone endpoint", "claude", fresh, idle, "", backends.Observation{State: backends.StateMissing}, actDead, evEndpoint},
		{"stopped agent", "claude", fresh, idle, "", backends.Observation{State: backends.StateSuspended}, actUnknown, evEndpoint},
		{"unreadable", "claude", fresh, idle, "", backends.Observation{State: backends.StateUnreadable}, actUnknown, evEndpoint},
	}
	for _, c := range cases {
		tg := activityTarget(t, c.harness, c.gen, c.report, c.busy)
		got := readActivity(tg, c.obs, now, testWaits, screenView{})
		if got.Word != c.word || got.Evidence != c.evident {
			t.Errorf("%s: activity=%s evidence=%s, want %s %s", c.name, got.Word, got.Evidence, c.word, c.evident)
		}
	}
}

// A dialog drawn on the screen is waiting at once, with what for, over
// any report (claude's comes ~6 s later); a waiting report with no dialog
// drawn says the one kind its harness's wiring reports, else unknown; a
// dead endpoint's screen says nothing.
func TestReadActivityWaitingFor(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	gen := "s" + strconv.FormatInt(now.Add(-5*time.Second).Unix(), 10) + ".1"
	busy := "state=busy\ngen=" + gen + "\n"
	waiting := "state=waiting\ngen=" + gen + "\n"
	alive := backends.Observation{State: backends.StateAlive}
	perm := screenView{Read: true, Dialog: harness.Dialog{Name: "permission", Waits: harness.WaitPermission}}
	composer := screenView{Read: true, Ready: true}
	cases := []struct {
		name, harness, report string
		obs                   backends.Observation
		scr                   screenView
		word, evident, waits  string
	}{
		{"dialog over a busy report", "claude", busy, alive, perm, actWaiting, evScreen, harness.WaitPermission},
		{"an overlay waits for nothing", "claude", busy, alive, screenView{Read: true}, actBusy, evTelemetry, ""},
		{"claude's report names no kind", "claude", waiting, alive, screenView{}, actWaiting, evTelemetry, waitingUnknown},
		{"claude's report stands over its composer (a question has no signature)", "claude", waiting, alive, composer, actWaiting, evTelemetry, waitingUnknown},
		{"opencode's report is a permission", "opencode", waiting, alive, screenView{}, actWaiting, evTelemetry, harness.WaitPermission},
		{"gemini's dialog gone, composer idle", "gemini", waiting, alive, composer, actIdle, evScreen, ""},
		{"gemini's dialog gone, turn running", "gemini", waiting, alive, screenView{Read: true, Ready: true, Busy: true}, actBusy, evScreen, ""},
		{"dead endpoint", "claude", busy, backends.Observation{State: backends.StateDead}, perm, actDead, evEndpoint, ""},
		// pi reports each failed attempt's end, then retries on its own
		{"an idle report under a busy mark", "pi", "state=idle\ngen=" + gen + "\n", alive, screenView{Read: true, Busy: true}, actBusy, evScreen, ""},
		{"an idle report over an idle screen", "pi", "state=idle\ngen=" + gen + "\n", alive, composer, actIdle, evTelemetry, ""},
	}
	for _, c := range cases {
		tg := activityTarget(t, c.harness, gen, c.report, "")
		got := readActivity(tg, c.obs, now, testWaits, c.scr)
		if got.Word != c.word || got.Evidence != c.evident || got.For != c.waits {
			t.Errorf("%s: activity=%s evidence=%s waiting_for=%q, want %s %s %q", c.name, got.Word, got.Evidence, got.For, c.word, c.evident, c.waits)
		}
	}
}

// copilot runs no agentStop for a turn whose model calls failed for good:
// its busy report would stand until the next prompt. The record's end of
// that turn (a real 1.0.102 session's session.error) decides a report
// older than it; a report newer than it, or a busy mark drawn, stands.
func TestABusyReportGivesWayToAnUnreportedTurnEnd(t *testing.T) {
	home := t.TempDir()
	const wt = "/tmp/cop/wt" // the real session's cwd
	data, err := os.ReadFile("../../../harness/records/testdata/copilot/session-outage.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")[:23] // up to the failed turn's session.error
	file := filepath.Join(home, ".copilot", "session-state", "s1", "events.jsonl")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	failedAt := time.Date(2026, 12, 6, 12, 49, 28, 947e6, time.UTC)
	gen := "s" + strconv.FormatInt(failedAt.Add(-time.Minute).Unix(), 10) + ".1"
	obs := backends.Observation{State: backends.StateAlive, CurrentPath: wt}
	for _, c := range []struct {
		name          string
		harness       string
		busyAt        time.Time
		scr           screenView
		word, evident string
	}{
		{"report before the failed end", "copilot", failedAt.Add(-20 * time.Second), screenView{}, actIdle, evRecord},
		{"report after it (a new prompt)", "copilot", failedAt.Add(time.Second), screenView{}, actBusy, evTelemetry},
		{"busy mark drawn", "copilot", failedAt.Add(-20 * time.Second), screenView{Read: true, Busy: true}, actBusy, evTelemetry},
	} {
		report := state.AgentState{State: state.ActivityBusy, Gen: gen, Event: "prompt-submitted", At: c.busyAt, Harness: c.harness}
		tg := activityTarget(t, c.harness, gen, string(report.Bytes()), "")
		tg.LocateRecordsBy(func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}, nil)
		got := readActivity(tg, obs, failedAt.Add(time.Minute), testWaits, c.scr)
		if got.Word != c.word || got.Evidence != c.evident {
			t.Errorf("%s: activity=%s evidence=%s, want %s %s", c.name, got.Word, got.Evidence, c.word, c.evident)
		}
	}
}

// An idle report older than a message fmctl submitted gives way to the
// record, for FM_CONTROL_REPORT_LAG, where the record shows that message's turn
// running: gemini records a prompt before its BeforeAgent hook reports
// busy. A report newer than the submit, a submit older than the lag, or
// a record whose newest turn ended leaves the report standing. The record
// is a real copilot session's (any record reader serves).
func TestAnIdleReportOlderThanASubmitGivesWayToARunningTurn(t *testing.T) {
	data, err := os.ReadFile("../../../harness/records/testdata/copilot/session-outage.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, "2026-12-06T12:49:"+s+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	obs := backends.Observation{State: backends.StateAlive, CurrentPath: "/tmp/cop/wt"}
	for _, c := range []struct {
		name              string
		upTo              int // the record's lines: 19 ends at the second turn's start, 13 at the first turn's end
		idleAt, sent, now time.Time
		word, evident     string
	}{
		{"submit after the idle report, turn running", 19, at("04.900"), at("05.500"), at("07.000"), actBusy, evRecord},
		{"idle report after the submit", 19, at("05.600"), at("05.500"), at("07.000"), actIdle, evTelemetry},
		{"submit older than the lag", 19, at("04.900"), at("05.500"), at("05.500").Add(testWaits.ReportLag + time.Second), actIdle, evTelemetry},
		{"newest turn ended", 13, at("04.300"), at("04.310"), at("07.000"), actIdle, evTelemetry},
	} {
		home := t.TempDir()
		file := filepath.Join(home, ".copilot", "session-state", "s1", "events.jsonl")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(strings.Join(lines[:c.upTo], "")), 0o600); err != nil {
			t.Fatal(err)
		}
		gen := "s" + strconv.FormatInt(c.idleAt.Add(-time.Minute).Unix(), 10) + ".1"
		report := state.AgentState{State: state.ActivityIdle, Gen: gen, Event: "turn-finished", At: c.idleAt, Harness: "copilot"}
		tg := activityTarget(t, "copilot", gen, string(report.Bytes()), "")
		tg.LocateRecordsBy(func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}, nil)
		if err := tg.Store.StampSubmitted("t1", c.sent); err != nil {
			t.Fatal(err)
		}
		got := readActivity(tg, obs, c.now, testWaits, screenView{})
		if got.Word != c.word || got.Evidence != c.evident {
			t.Errorf("%s: activity=%s evidence=%s, want %s %s", c.name, got.Word, got.Evidence, c.word, c.evident)
		}
	}
}
