package signalctx

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// guard catches SIGINT for the test binary, so a signal no context of the
// package catches yet does not end the test.
func guard(t *testing.T) chan os.Signal {
	t.Helper()
	c := make(chan os.Signal, 64)
	signal.Notify(c, os.Interrupt)
	t.Cleanup(func() { signal.Stop(c) })
	return c
}

// interrupt sends SIGINT to this process and waits for the guard to see it,
// so the signal has been delivered to every catcher when it returns.
func interrupt(t *testing.T, seen chan os.Signal) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	case <-time.After(5 * time.Second):
		t.Fatal("SIGINT was not delivered within 5 s")
	}
}

func cancelledWithin(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return true
	case <-time.After(d):
		return false
	}
}

func TestANewContextIsCancelledBySIGINTOnlyOnceArmed(t *testing.T) {
	seen := guard(t)
	ctx, stop := New(context.Background())
	defer stop()
	interrupt(t, seen)
	if cancelledWithin(ctx, 100*time.Millisecond) {
		t.Fatal("a SIGINT before Arm cancelled the context")
	}
	// Arm through a context derived from it, as a pause under a timeout is.
	derived, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	Arm(derived)
	interrupt(t, seen)
	if !cancelledWithin(ctx, 5*time.Second) {
		t.Fatal("a SIGINT after Arm did not cancel the context")
	}
	if ctx.Err() != context.Canceled {
		t.Fatalf("ctx.Err() = %v, want context.Canceled", ctx.Err())
	}
}

func TestAnArmedContextIsCancelledBySIGTERM(t *testing.T) {
	term := make(chan os.Signal, 8)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	ctx, stop := Armed(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !cancelledWithin(ctx, 5*time.Second) {
		t.Fatal("SIGTERM did not cancel an armed context")
	}
}

func TestStopCancelsAndArmAfterStopInstallsNothing(t *testing.T) {
	ctx, stop := New(context.Background())
	stop()
	stop() // a second stop is harmless
	if ctx.Err() == nil {
		t.Fatal("stop did not cancel the context")
	}
	Arm(ctx) // after stop: nothing to watch for
	Arm(context.Background())
}
