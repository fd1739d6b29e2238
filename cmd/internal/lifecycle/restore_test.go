package lifecycle

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
)

// blankScreen is a backend whose screen never shows a restored prompt.
type blankScreen struct{ captures int }

func (b *blankScreen) Name() string                                              { return "fake" }
func (b *blankScreen) SendText(context.Context, backends.Endpoint, string) error { return nil }
func (b *blankScreen) SendKey(context.Context, backends.Endpoint, harness.Key) error {
	return nil
}
func (b *blankScreen) Capture(context.Context, backends.Endpoint) (backends.Screen, error) {
	b.captures++
	return backends.Screen{Lines: []string{"answer so far", "", "❯ ", ""}}, nil
}
func (b *blankScreen) AgentState(context.Context, backends.Endpoint) backends.Observation {
	return backends.Observation{State: backends.StateAlive}
}
func (b *blankScreen) CurrentPath(context.Context, backends.Endpoint) (string, error) {
	return "/w", nil
}
func (b *blankScreen) Create(context.Context, backends.CreateSpec) ([]backends.Field, error) {
	return nil, errors.New("not supported")
}
func (b *blankScreen) Kill(context.Context, backends.Endpoint) error { return nil }
func (b *blankScreen) ValidateRecord(backends.Endpoint) error        { return nil }

// A cancel the record marks ends the wait for a restored prompt: claude
// puts the prompt back or marks the cancel, never both. Without a mark the
// wait runs its bound.
func TestRestoreWaitEndsOnTheRecordsCancelMark(t *testing.T) {
	h, _ := harness.Lookup("claude")
	sig, _ := h.Screen()
	busyEmpty := harness.ScreenState{Busy: true, Composer: harness.ComposerEmpty}
	for _, c := range []struct {
		name   string
		marked func() bool
		atMost time.Duration
		least  time.Duration
	}{
		{"marked", func() bool { return true }, restoreWait / 3, 0},
		{"no mark", func() bool { return false }, restoreWait + time.Second, restoreWait},
		{"no record", nil, restoreWait + time.Second, restoreWait},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg := &task.Target{ID: "t1", Backend: &blankScreen{}, Harness: h, HasHarness: true}
			step := (&Verbs{}).restoreStep(context.Background(), tg, sig, busyEmpty, c.marked)
			if step == nil {
				t.Fatal("a busy agent with an empty composer is watched for a restore")
			}
			start := time.Now()
			cleared, err := step()
			took := time.Since(start)
			if cleared != "" || err != nil || took > c.atMost || took < c.least {
				t.Fatalf("cleared %q, err %v, after %v; want nothing, in [%v, %v]", cleared, err, took, c.least, c.atMost)
			}
		})
	}
}

// putBack is claude's composer holding the cancelled prompt it put back
// (a real capture) until a C-u reaches it, then empty (another).
type putBack struct {
	blankScreen
	holding, empty []string
	keys           []harness.Key
}

func (b *putBack) SendKey(_ context.Context, _ backends.Endpoint, k harness.Key) error {
	b.keys = append(b.keys, k)
	return nil
}

func (b *putBack) Capture(context.Context, backends.Endpoint) (backends.Screen, error) {
	if slices.Contains(b.keys, harness.KeyCtrlU) {
		return backends.Screen{Lines: b.empty}, nil
	}
	return backends.Screen{Lines: b.holding}, nil
}

// A prompt put back is cleared as soon as it is drawn: the agent drew it
// in answer to the Escape, so the Escape's gap, which keeps input from
// reaching an agent that has not yet read the Escape, is not waited out.
func TestRestoredPromptIsClearedWithoutTheEscapesGap(t *testing.T) {
	h, _ := harness.Lookup("claude")
	sig, _ := h.Screen()
	be := &putBack{holding: readCapture(t, "claude-2.1.197/composer-text.txt"), empty: readCapture(t, "claude-2.1.197/composer-empty-after-400.txt")}
	tg := &task.Target{ID: "t1", Backend: be, Harness: h, HasHarness: true,
		Ability: harness.Backend{Name: "fake", Keys: []harness.Key{harness.KeyEnd, harness.KeyCtrlU}}}
	step := (&Verbs{}).restoreStep(context.Background(), tg, sig, harness.ScreenState{Busy: true, Composer: harness.ComposerEmpty}, nil)
	if step == nil {
		t.Fatal("a busy agent with an empty composer is watched for a restore")
	}
	start := time.Now()
	cleared, err := step()
	if took := time.Since(start); err != nil || cleared != "hello one" || took >= h.PressGap {
		t.Fatalf("cleared %q, err %v, after %v (keys %v); want the prompt cleared sooner than the %v gap", cleared, err, took, be.keys, h.PressGap)
	}
}
