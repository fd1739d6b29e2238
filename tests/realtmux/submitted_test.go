package realtmux

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

// On a real server the record is found where the agent process runs (its
// HOME and directory from /proc), never the caller's: a record written
// after fm-send gave up is exit 3 unrecorded, and
// `fm-control wait --for submitted` then proves that very message arrived.
func TestWaitSubmittedSeesALateRecord(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.startAgent("t1", "claude", agentEnv("FAKEAGENT_RECORD_DELAY=1500ms"))
	// The caller's HOME is not the agent's: only /proc finds the record.
	caller := []string{"HOME=" + t.TempDir()}
	r := s.run("", append(caller, "FM_SEND_RECORD_WAIT=0.2"), "fm-send", "t1", "late record")
	wantCode(t, r, 3, "fm-send t1 to an agent whose record shows the prompt 1.5s later")
	if !regexp.MustCompile(`claude's own record has not shown it within 200ms\n`).MatchString(r.stderr) {
		t.Fatalf("stderr = %q, want submit unrecorded", r.stderr)
	}
	m := regexp.MustCompile(`--message-id (m[0-9]{8}T[0-9]{6}-[0-9a-f]{8})`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("stderr = %q names no message id to wait for", r.stderr)
	}
	before := s.homeTree()
	w := s.run("", caller, "fm-control", "wait", "t1", "--for", "submitted", "--message-id", m[1], "--timeout", "20")
	wantCode(t, w, 0, "fm-control wait t1 --for submitted")
	if !regexp.MustCompile(`^reached t1 for=submitted message=` + m[1] + ` proof=record state=alive waited=[0-9.]+s\n$`).MatchString(w.stdout) {
		t.Fatalf("stdout = %q", w.stdout)
	}
	s.assertHomeIs(before, "wait --for submitted")
}

// An interrupt does not wait for a send's record: fm-send lets the input
// lock go once its keys are out, so `fm-control interrupt` issued while a
// send waits for the agent to record its prompt acts at once, and the send
// still ends with its own verdict. A second send waits for the first to be
// judged (the send queue), and both arrive whole, once each.
func TestAnInterruptDoesNotWaitForASendsRecord(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	const recordDelay = 5 * time.Second
	a := s.startAgent("t1", "claude", agentEnv("FAKEAGENT_RECORD_DELAY="+recordDelay.String()))
	env := []string{"FM_SEND_RECORD_WAIT=10"}
	sends := make(chan result, 2)
	go func() { sends <- s.run("", env, "fm-send", "t1", "first, recorded late") }()
	waitFor(t, 10*time.Second, "the first send's Enter", func() bool {
		return slices.Contains(a.submitted(), "first, recorded late")
	}, a.state)
	go func() { sends <- s.run("", env, "fm-send", "t1", "second, after the first is judged") }()
	r := s.run("", nil, "fm-control", "interrupt", "t1")
	if r.code != 0 && r.code != 3 {
		t.Fatalf("interrupt during a send's record wait: %s", r)
	}
	if r.elapsed > recordDelay-time.Second {
		t.Fatalf("the interrupt took %v: it waited for the send's record (%v), not only its keys", r.elapsed, recordDelay)
	}
	for range 2 {
		if got := <-sends; got.code != 0 && got.code != 3 {
			t.Fatalf("fm-send: %s", got)
		}
	}
	a.quiet()
	want := []string{"first, recorded late", "second, after the first is judged"}
	if got := a.submitted(); !slices.Equal(got, want) {
		t.Fatalf("the agent's submits = %q, want %q", got, want)
	}
}
