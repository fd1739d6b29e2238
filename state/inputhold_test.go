package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A gap recorded by one holder of the input lock is waited out by the next
// one, and only the rest of it; a stale or unreadable stamp costs nothing.
func TestLockInputWaitsOutTheGapThePreviousHolderRecorded(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	l, err := s.LockInput("t1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.HoldInputUntil(time.Now().Add(150 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	l.Release()
	start := time.Now()
	l, err = s.LockInput("t1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 140*time.Millisecond {
		t.Errorf("the next holder went after %v, before the recorded gap ended", waited)
	}
	l.Release()
	for _, stamp := range []string{"", "garbage\n", "1\n"} {
		if err := os.WriteFile(filepath.Join(s.Dir, ".send-t1.lock"), []byte(stamp), 0o644); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		l, err = s.LockInput("t1", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
		if waited := time.Since(start); waited > 100*time.Millisecond {
			t.Errorf("stamp %q made the next holder wait %v", stamp, waited)
		}
	}
}
