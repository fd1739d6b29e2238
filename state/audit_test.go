package state

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

func TestAppendAuditKeepsWholeLinesUnderItsBound(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	const max = 400
	for i := 0; i < 100; i++ {
		if err := s.AppendAudit("t1", fmt.Sprintf("line=%03d padding=xxxxxxxxxxxx", i), max); err != nil {
			t.Fatal(err)
		}
	}
	data, err := s.ReadAudit("t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > max || len(data) == 0 {
		t.Fatalf("trail holds %d bytes, want 1..%d", len(data), max)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "line=") || len(l) != len("line=000 padding=xxxxxxxxxxxx") {
			t.Errorf("torn line %q", l)
		}
	}
	if last := lines[len(lines)-1]; last != "line=099 padding=xxxxxxxxxxxx" {
		t.Errorf("newest line is %q, want line 99 kept", last)
	}
	if info, _ := os.Stat(s.AuditPath("t1")); info.Mode().Perm() != 0o600 {
		t.Errorf("trail mode %v, want 0600", info.Mode().Perm())
	}
}

func TestAppendAuditConcurrentAppendsAreNeverLostOrTorn(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if err := s.AppendAudit("t1", fmt.Sprintf("w=%d i=%02d", w, i), 0); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	data, _ := s.ReadAudit("t1")
	if n := bytes.Count(data, []byte("\n")); n != 200 {
		t.Errorf("trail holds %d lines, want 200", n)
	}
}

func TestAppendAuditRefusesASymlinkAndANewline(t *testing.T) {
	dir := t.TempDir()
	s := Store{Dir: dir}
	target := dir + "/elsewhere"
	if err := os.Symlink(target, s.AuditPath("t1")); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAudit("t1", "x", 0); err == nil {
		t.Error("appended through a symlink")
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("the symlink's target was created")
	}
	if err := s.AppendAudit("t2", "a\nb", 0); err == nil {
		t.Error("a line holding a newline was appended")
	}
	if data, err := s.ReadAudit("none"); err != nil || data != nil {
		t.Errorf("ReadAudit of no trail = %q, %v; want empty", data, err)
	}
}
