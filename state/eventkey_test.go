package state

import (
	"os"
	"testing"
	"time"
)

func TestEventKeyIsSecretRotatedAndCheckedExactly(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	k1, err := NewEventKey()
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != 64 {
		t.Fatalf("key %q is not 256 bits of hex", k1)
	}
	if err := s.WriteEventKey("t1", k1); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(s.EventKeyPath("t1"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", info.Mode().Perm())
	}
	k2, _ := NewEventKey()
	if err := s.WriteEventKey("t1", k2); err != nil {
		t.Fatal(err)
	}
	for presented, want := range map[string]bool{k2: true, k1: false, "": false, k2[:63]: false, k2 + "0": false} {
		if ok, err := s.CheckEventKey("t1", presented); ok != want || err != nil {
			t.Errorf("CheckEventKey(%q) = %v, %v; want %v", presented, ok, err, want)
		}
	}
	if ok, err := s.CheckEventKey("t2", k2); ok || err == nil {
		t.Errorf("a task without a key file matched (%v, %v)", ok, err)
	}
	if err := os.Symlink(s.EventKeyPath("t1"), s.EventKeyPath("t3")); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.CheckEventKey("t3", k2); ok {
		t.Error("a key read through a symlink matched")
	}
}

func TestRefusedEventsAreCounted(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if n := s.RefusedEvents("t1"); n != 0 {
		t.Fatalf("no log counts %d", n)
	}
	for i := 0; i < 3; i++ {
		if err := s.CountRefusedEvent("t1", time.Now(), "event=turn-finished reason=no-key"); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.RefusedEvents("t1"); n != 3 {
		t.Fatalf("counted %d, want 3", n)
	}
}
