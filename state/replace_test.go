package state

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReplaceRecordKeepsThePriorOnlyUntilTheWriteCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t1.meta")
	if err := os.WriteFile(path, []byte("window=s:fm-t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceRecord(path, []byte("window=s:fm-t1\n"), []byte("window=o:fm-t1\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "window=o:fm-t1\n" {
		t.Fatalf("record = %q", got)
	}
	if _, err := os.Lstat(path + ".prior"); !os.IsNotExist(err) {
		t.Fatalf("the prior record was left behind after a committed write: %v", err)
	}
	needFaults(t)
	t.Setenv("FM_TEST_FAULT", "write:t1.meta")
	if err := ReplaceRecord(path, []byte("window=o:fm-t1\n"), []byte("window=x:fm-t1\n")); err == nil {
		t.Fatal("ReplaceRecord reported success for a failed write")
	}
	if got, _ := os.ReadFile(path); string(got) != "window=o:fm-t1\n" {
		t.Fatalf("a failed replace changed the record to %q", got)
	}
}
