package state

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRequestLogAnswersARetryFromMemory(t *testing.T) {
	log := Store{Dir: t.TempDir()}.Requests()
	var ran atomic.Int32
	run := func() string {
		lock, remembered, err := log.Claim("req-0001", 5*time.Second)
		if err != nil {
			t.Error(err)
			return ""
		}
		defer lock.Release()
		if remembered != nil {
			return string(remembered)
		}
		ran.Add(1)
		time.Sleep(20 * time.Millisecond) // a second copy arrives meanwhile
		if err := log.Remember("req-0001", []byte("sent")); err != nil {
			t.Error(err)
		}
		return "sent"
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := run(); got != "sent" {
				t.Errorf("outcome = %q", got)
			}
		})
	}
	wg.Wait()
	if n := ran.Load(); n != 1 {
		t.Fatalf("the request ran %d times, want once", n)
	}
}

func TestRequestLogRefusesHostileIDs(t *testing.T) {
	log := Store{Dir: t.TempDir()}.Requests()
	for _, id := range []string{"", "short", "../../etc/passwd", "a/bcdefghij", ".hidden-file", "abc\ndefghij"} {
		if _, _, err := log.Claim(id, time.Second); err == nil {
			t.Errorf("Claim(%q) accepted", id)
		}
	}
}

func TestRequestLogIsBounded(t *testing.T) {
	log := Store{Dir: t.TempDir()}.Requests()
	log.MaxKept = 3
	for _, id := range []string{"req-0001", "req-0002", "req-0003", "req-0004", "req-0005"} {
		lock, _, err := log.Claim(id, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := log.Remember(id, []byte(id)); err != nil {
			t.Fatal(err)
		}
		lock.Release()
		// Distinct times, oldest first.
		old := time.Now().Add(-time.Duration(10-len(id)) * time.Minute)
		_ = os.Chtimes(log.outcomePath(id), old, old)
	}
	matches, _ := filepath.Glob(filepath.Join(log.Dir, "*.outcome"))
	if len(matches) > 3 {
		t.Fatalf("%d outcomes kept, want at most 3: %v", len(matches), matches)
	}
	stale := time.Now().Add(-48 * time.Hour)
	_ = os.Chtimes(log.outcomePath("req-0005"), stale, stale)
	log.prune(time.Now())
	if _, err := os.Stat(log.outcomePath("req-0005")); err == nil {
		t.Fatal("an outcome two days old was kept")
	}
}
