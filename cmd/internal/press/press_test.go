package press

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/fault"
	"fmctl/harness"
	"fmctl/state"
)

// fakeMux is a backend without server-side gating: every call is one
// multiplexer call, logged with when it ran.
type fakeMux struct {
	backends.Backend // the calls a key never makes
	state            backends.AgentState
	keyErr           error // what a key's call returns
	calls            []string
	at               []time.Time
}

func (f *fakeMux) call(c string) {
	f.calls = append(f.calls, c)
	f.at = append(f.at, time.Now())
}

func (f *fakeMux) SendKey(_ context.Context, _ backends.Endpoint, key harness.Key) error {
	f.call("key " + string(key))
	return f.keyErr
}

func (f *fakeMux) AgentState(context.Context, backends.Endpoint) backends.Observation {
	f.call("state")
	return backends.Observation{State: f.state}
}

func (f *fakeMux) Capture(context.Context, backends.Endpoint) (backends.Screen, error) {
	f.call("capture")
	return backends.Screen{Lines: []string{"> "}}, nil
}

// gatedMux gates a key server-side: the state read, the gate and the key
// (and the reads asked for) are one call, and a refused key is never sent.
type gatedMux struct{ *fakeMux }

func (g gatedMux) SendKeyGated(_ context.Context, _ backends.Endpoint, key harness.Key, k backends.GatedKey) (backends.GatedResult, error) {
	g.call("gated " + string(key))
	var res backends.GatedResult
	if err := k.Gate(backends.Observation{State: g.state}); err != nil {
		res.Refused = err
		return res, nil
	}
	if k.ScreenBefore {
		res.Before = &backends.Screen{Lines: []string{"> "}}
	}
	if k.ReadAfter {
		res.After = &backends.Observation{State: g.state}
	}
	return res, g.keyErr
}

var errRefused = errors.New("not the task's agent")

func aliveOnly(obs backends.Observation) error {
	if obs.State != backends.StateAlive {
		return errRefused
	}
	return nil
}

func TestAnUngatedBackendIsReadBeforeEveryKey(t *testing.T) {
	f := &fakeMux{state: backends.StateAlive}
	k := Keys{Backend: f, Gate: aliveOnly}
	p, err := k.Sequence(context.Background(), []harness.Key{harness.KeyEscape, harness.KeyCtrlU}, Opts{ScreenBefore: true})
	if err != nil || p.Sent != 2 {
		t.Fatalf("Sequence = %+v, %v; want both keys sent", p, err)
	}
	want := "state capture key Escape state key C-u"
	if got := strings.Join(f.calls, " "); got != want {
		t.Fatalf("calls = %q, want %q", got, want)
	}
	if p.Before == nil || p.Judged == nil || p.Judged.State != backends.StateAlive {
		t.Fatalf("Pressed = %+v, want the screen before and the state judged", p)
	}
}

func TestAGatedBackendPassesTheGateInTheKeysOwnCall(t *testing.T) {
	g := gatedMux{&fakeMux{state: backends.StateAlive}}
	k := Keys{Backend: g, Gate: aliveOnly}
	p, err := k.Sequence(context.Background(), []harness.Key{harness.KeyEscape, harness.KeyEscape}, Opts{ScreenBefore: true, ReadAfter: true})
	if err != nil || p.Sent != 2 {
		t.Fatalf("Sequence = %+v, %v; want both keys sent", p, err)
	}
	if got := strings.Join(g.calls, " "); got != "gated Escape gated Escape" {
		t.Fatalf("calls = %q, want one gated call a key", got)
	}
	if p.Before == nil || p.After == nil {
		t.Fatalf("Pressed = %+v, want the screen before and the state after", p)
	}
}

func TestNoGateSendsTheKeyAlone(t *testing.T) {
	g := gatedMux{&fakeMux{state: backends.StateDead}}
	if _, err := (Keys{Backend: g}).Press(context.Background(), harness.KeyEnter, Opts{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(g.calls, " "); got != "key Enter" {
		t.Fatalf("calls = %q, want the key alone (a launch line's Enter goes to a shell)", got)
	}
}

func TestARefusalSendsNothingFurther(t *testing.T) {
	for _, b := range []struct {
		name string
		mux  func(*fakeMux) backends.Backend
		want string
	}{
		{"ungated", func(f *fakeMux) backends.Backend { return f }, "state"},
		{"gated", func(f *fakeMux) backends.Backend { return gatedMux{f} }, "gated Escape"},
	} {
		t.Run(b.name, func(t *testing.T) {
			f := &fakeMux{state: backends.StateDead}
			k := Keys{Backend: b.mux(f), Gate: aliveOnly, Words: SendWords("t1", "s:w", "tmux")}
			p, err := k.Sequence(context.Background(), []harness.Key{harness.KeyEscape, harness.KeyCtrlU}, Opts{})
			if !errors.Is(err, errRefused) || p.Refused != err || p.Sent != 0 {
				t.Fatalf("Sequence = %+v, %v; want the gate's refusal unchanged, nothing sent", p, err)
			}
			if got := strings.Join(f.calls, " "); got != b.want {
				t.Fatalf("calls = %q, want %q: no key after a refusal", got, b.want)
			}
		})
	}
}

func TestATimedOutKeyIsUnconfirmed(t *testing.T) {
	for _, b := range []struct {
		name string
		mux  func(*fakeMux) backends.Backend
	}{
		{"ungated", func(f *fakeMux) backends.Backend { return f }},
		{"gated", func(f *fakeMux) backends.Backend { return gatedMux{f} }},
	} {
		t.Run(b.name, func(t *testing.T) {
			timeout := &backends.TimeoutError{Call: "tmux send-keys", After: 300 * time.Millisecond}
			f := &fakeMux{state: backends.StateAlive, keyErr: timeout}
			k := Keys{Backend: b.mux(f), Gate: aliveOnly, Words: SendWords("t1", "s:w", "tmux")}
			p, err := k.Press(context.Background(), harness.KeyCtrlU, Opts{})
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Class != fault.ClassUnconfirmed {
				t.Fatalf("err = %v, want an unconfirmed fault", err)
			}
			if fault.CodeOf(err) != fault.EUnconfirmed || !containsAll(fe.Msg, "'C-u'", "s:w", "tmux send-keys timed out after 300ms") {
				t.Fatalf("err = %q (code %s), want unconfirmed naming the key, the endpoint and the call that timed out", fe.Msg, fault.CodeOf(err))
			}
			if len(fe.Hints) != 1 || !strings.Contains(fe.Hints[0], "fm-control read t1") {
				t.Fatalf("hints = %q, want one naming fm-control read t1", fe.Hints)
			}
			if p.Sent != 0 || p.Err != timeout || !p.Unknown() {
				t.Fatalf("Pressed = %+v, want the timeout kept as the key's error, which may have run", p)
			}
		})
	}
}

func TestAFailedKeyIsDeliveryFailed(t *testing.T) {
	f := &fakeMux{state: backends.StateAlive, keyErr: errors.New("no such pane")}
	_, err := (Keys{Backend: f, Words: InterruptWords("t1", "herdr")}).Press(context.Background(), harness.KeyEscape, Opts{})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Class != fault.ClassFailed || fe.Code != fault.EDeliveryFailed {
		t.Fatalf("err = %#v, want a failed delivery", err)
	}
	if !containsAll(fe.Msg, "Escape", "t1", "herdr", "no such pane") {
		t.Fatalf("msg = %q, want the key, the task, the backend and the multiplexer's error", fe.Msg)
	}
	// Without words, the multiplexer's error itself, for the caller's sentence.
	if p, err := (Keys{Backend: f}).Press(context.Background(), harness.KeyEnter, Opts{}); err != f.keyErr || p.Unknown() {
		t.Fatalf("err = %v (unknown: %v), want the multiplexer's own, which did not run", err, p.Unknown())
	}
}

func TestTheKeysOfASequenceAreAGapApart(t *testing.T) {
	f := &fakeMux{state: backends.StateAlive}
	gap := 60 * time.Millisecond
	keys := []harness.Key{harness.KeyEscape, harness.KeyEscape, harness.KeyCtrlU}
	if _, err := (Keys{Backend: f, Gap: gap}).Sequence(context.Background(), keys, Opts{}); err != nil {
		t.Fatal(err)
	}
	if len(f.at) != 3 {
		t.Fatalf("calls = %q, want three keys", f.calls)
	}
	for i := 1; i < len(f.at); i++ {
		if d := f.at[i].Sub(f.at[i-1]); d < gap {
			t.Fatalf("key %d came %v after the one before, want at least %v", i, d, gap)
		}
	}
}

func TestAnEscapesGapIsHeldForTheNextInput(t *testing.T) {
	store := state.Store{Dir: t.TempDir()}
	lock, err := store.LockInput("t1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	gap := 150 * time.Millisecond
	k := Keys{Gap: gap, Hold: lock}
	start := time.Now()
	k.Settle(harness.KeyEscape)
	if d := time.Since(start); d >= gap {
		t.Fatalf("Settle slept %v with a lock to record the gap in", d)
	}
	lock.Release()
	next, err := store.LockInput("t1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release()
	if d := time.Since(start); d < gap {
		t.Fatalf("the next input came %v after the Escape, want at least %v", d, gap)
	}
}

func TestAnEscapesGapIsSleptWithoutALock(t *testing.T) {
	gap := 50 * time.Millisecond
	start := time.Now()
	Keys{Gap: gap}.Settle(harness.KeyEscape)
	if d := time.Since(start); d < gap {
		t.Fatalf("Settle returned after %v, want the gap %v slept", d, gap)
	}
	start = time.Now()
	Keys{Gap: time.Second}.Settle(harness.KeyCtrlU)
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("Settle after C-u took %v; only an Escape needs the gap", d)
	}
}

func TestGateOnceReadsOnlyWhereEachKeyCannotBeGated(t *testing.T) {
	ctx := context.Background()
	f := &fakeMux{state: backends.StateAlive}
	gate, err := GateOnce(ctx, f, backends.Endpoint{}, aliveOnly)
	if err != nil || gate != nil || strings.Join(f.calls, " ") != "state" {
		t.Fatalf("ungated: gate nil %v, err %v, calls %q; want one read judged now and no gate for the keys", gate == nil, err, f.calls)
	}
	f.state = backends.StateDead
	if _, err := GateOnce(ctx, f, backends.Endpoint{}, aliveOnly); !errors.Is(err, errRefused) {
		t.Fatalf("ungated, agent gone: err %v, want the gate's refusal", err)
	}
	g := gatedMux{&fakeMux{state: backends.StateDead}}
	gate, err = GateOnce(ctx, g, backends.Endpoint{}, aliveOnly)
	if err != nil || gate == nil || len(g.calls) != 0 {
		t.Fatalf("gated: gate nil %v, err %v, calls %q; want the gate kept for each key's own call, nothing read", gate == nil, err, g.calls)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
