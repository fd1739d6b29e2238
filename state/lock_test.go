package state

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a helper process: FM_STATE_HELPER selects what
// the child does, so a lock can be held (or a write crashed) by a real,
// separate process that the test then kills.
func TestMain(m *testing.M) {
	switch os.Getenv("FM_STATE_HELPER") {
	case "hold-lock":
		l, ok, err := TryLock(os.Getenv("FM_STATE_HELPER_PATH"))
		if err != nil || !ok {
			fmt.Printf("no-lock %v\n", err)
			os.Exit(2)
		}
		fmt.Println("locked")
		_ = l
		time.Sleep(time.Minute)
		os.Exit(0)
	case "write":
		if err := WriteAtomic(os.Getenv("FM_STATE_HELPER_PATH"), []byte(os.Getenv("FM_STATE_HELPER_DATA"))); err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helper(t *testing.T, mode, path string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FM_STATE_HELPER="+mode, "FM_STATE_HELPER_PATH="+path)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func TestTryLockContendedFailsAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".control-t1.lock")
	first, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("first TryLock: ok=%v err=%v", ok, err)
	}
	defer first.Release()
	start := time.Now()
	second, ok, err := TryLock(path)
	if err != nil || ok {
		t.Fatalf("second TryLock on a held lock: ok=%v err=%v (lock %v)", ok, err, second)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("contended TryLock took %v; it must not wait", d)
	}
}

func TestReleasedLockCanBeRetaken(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".control-t1.lock")
	l, ok, _ := TryLock(path)
	if !ok {
		t.Fatal("first TryLock failed")
	}
	l.Release()
	l.Release() // twice is harmless
	again, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock after Release: ok=%v err=%v", ok, err)
	}
	again.Release()
}

func TestLockTaskRefusesWhileHeld(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	l, err := s.LockTask("t1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, err = s.LockTask("t1")
	if err == nil || !strings.Contains(err.Error(), "another lifecycle action is already running for task t1") {
		t.Fatalf("LockTask while held = %v", err)
	}
	other, err := s.LockTask("t2")
	if err != nil {
		t.Fatalf("another task's lock is independent: %v", err)
	}
	other.Release()
}

func TestTryLockRefusesASymlinkedLockFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".control-t1.lock")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if l, ok, err := TryLock(path); err == nil || ok {
		l.Release()
		t.Fatalf("TryLock followed a symlink: ok=%v err=%v", ok, err)
	}
}

func TestLockOfAKilledHolderIsRetakeable(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".control-t1.lock")
	child := helper(t, "hold-lock", path)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper did not take the lock: %q %v", line, err)
	}
	if _, ok, _ := TryLock(path); ok {
		t.Fatal("TryLock succeeded while another process holds the lock")
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	l, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("lock of a SIGKILLed holder not retakeable: ok=%v err=%v", ok, err)
	}
	l.Release()
}

func TestWaitLockTimesOutThenSucceedsAfterRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".send-t1.lock")
	held, _, _ := TryLock(path)
	start := time.Now()
	if _, err := WaitLock(path, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "still held") {
		t.Fatalf("WaitLock on a held lock = %v", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 2*time.Second {
		t.Errorf("WaitLock waited %v for a 50ms timeout", d)
	}
	time.AfterFunc(20*time.Millisecond, held.Release)
	l, err := WaitLock(path, 2*time.Second)
	if err != nil {
		t.Fatalf("WaitLock after release: %v", err)
	}
	l.Release()
}

func TestWriteAtomicReplacesContentAndKeepsPermissions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t1.meta")
	if err := os.WriteFile(path, []byte("old=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(path, []byte("new=2\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "new=2\n" {
		t.Errorf("content = %q", got)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want the old file's 0600", info.Mode().Perm())
	}
	fresh := filepath.Join(dir, "t2.meta")
	if err := WriteAtomic(fresh, []byte("a=1\n")); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(fresh); info.Mode().Perm() != 0o644 {
		t.Errorf("new file mode = %v, want 0644", info.Mode().Perm())
	}
	if leftovers := listDir(t, dir); len(leftovers) != 2 {
		t.Errorf("temp files left behind: %v", leftovers)
	}
}

func TestWriteAtomicInjectedFaultLeavesTheOldFile(t *testing.T) {
	needFaults(t)
	path := filepath.Join(t.TempDir(), "t1.meta")
	if err := os.WriteFile(path, []byte("old=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FM_TEST_FAULT", "journal:x,write:t1.meta")
	if err := WriteAtomic(path, []byte("new=2\n")); err == nil || !strings.Contains(err.Error(), "injected fault at write:t1.meta") {
		t.Fatalf("WriteAtomic = %v, want the injected fault", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old=1\n" {
		t.Errorf("file changed to %q", got)
	}
	t.Setenv("FM_TEST_FAULT", "write:t1.meta.other")
	if err := WriteAtomic(path, []byte("new=2\n")); err != nil {
		t.Fatalf("a fault naming another step fired: %v", err)
	}
}

func TestWriteAtomicCrashBeforeRenameLeavesTheOldFileWhole(t *testing.T) {
	needFaults(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "t1.meta")
	old := []byte("window=fmses:fm-t1\nendpoint_task_id=t1\nharness=claude\n")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	newData := strings.Repeat("new=replacement\n", 200)
	child := helper(t, "write", path, "FM_TEST_CRASH=before-rename:t1.meta", "FM_STATE_HELPER_DATA="+newData)
	out, err := child.CombinedOutput()
	var ee *exec.ExitError
	if err == nil || !asExit(err, &ee) {
		t.Fatalf("child was not killed: err=%v out=%q", err, out)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended %v, want killed by SIGKILL (out %q)", ws, out)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, old) {
		t.Fatalf("after a crash before rename the record is %q (%v), want the old bytes", got, err)
	}
	// Whatever the crash left is a temp file beside the record, never the record.
	for _, name := range listDir(t, dir) {
		if name == "t1.meta" {
			continue
		}
		if !strings.HasPrefix(name, ".t1.meta") {
			t.Errorf("unexpected file %s after the crash", name)
		}
	}
	// The same child without the crash hook does replace the file, so the
	// crash (not some other failure) is what kept the old bytes.
	if out, err := helper(t, "write", path, "FM_STATE_HELPER_DATA="+newData).CombinedOutput(); err != nil {
		t.Fatalf("control write failed: %v %s", err, out)
	}
	if got, _ := os.ReadFile(path); string(got) != newData {
		t.Fatalf("control write did not replace the file")
	}
}

func asExit(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
