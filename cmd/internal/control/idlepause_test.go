package control

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fmctl/backends"
)

func TestIdlePauseEndsWhenAWatchedFileIsReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t1.agent-state")
	if err := os.WriteFile(path, []byte("idle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &idlePause{backoff: backends.Backoff{Max: 10 * time.Second}, statePoll: 5 * time.Millisecond, paths: []string{path}}
	p.restamp()
	for p.backoff.Next() < 5*time.Second { // to the long intervals of an idle wait
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		tmp := path + ".tmp"
		_ = os.WriteFile(tmp, []byte("busy\n"), 0o644)
		_ = os.Rename(tmp, path)
	}()
	start := time.Now()
	if err := p.Sleep(context.Background(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the pause ran %v after the watched file was replaced at 50ms", took)
	}
	if got := p.backoff.Next(); got != backends.MinPoll {
		t.Errorf("after a change the next pause is %v, want the short %v again", got, backends.MinPoll)
	}
}

func TestIdlePauseWaitsItsIntervalWhenNothingChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t1.agent-state")
	p := &idlePause{backoff: backends.Backoff{Max: 80 * time.Millisecond}, statePoll: 5 * time.Millisecond, paths: []string{path}}
	p.restamp()
	p.backoff.Next()
	p.backoff.Next()
	p.backoff.Next() // 10, 20, 40: the next is the 80 ms cap
	start := time.Now()
	if err := p.Sleep(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 80*time.Millisecond {
		t.Errorf("the pause ended after %v with nothing changed, before its 80ms", took)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Sleep(ctx, time.Second); err == nil {
		t.Error("a pause under a cancelled context returned no error")
	}
}
