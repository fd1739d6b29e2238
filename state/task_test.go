package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

func TestValidTaskID(t *testing.T) {
	good := []string{"t1", "a.b", "a_b-c", "T", "0", "x..y", "a-", strings.Repeat("a", 64)}
	bad := []string{"", "-rf", ".hidden", "../x", "a/b", "t1\nwindow=evil", strings.Repeat("a", 65),
		"tâche", "日本", "a:b", "a b", "a\x00", "a\\b", "$(x)", "a;b", "-", ".", ".."}
	for _, id := range good {
		if !ValidTaskID(id) {
			t.Errorf("ValidTaskID(%q) = false, want true", id)
		}
	}
	for _, id := range bad {
		if ValidTaskID(id) {
			t.Errorf("ValidTaskID(%q) = true, want false", id)
		}
	}
}

func TestCheckTaskArgMessages(t *testing.T) {
	cases := []struct {
		id, want string
	}{
		{"fmses:fm-t1", "'fmses:fm-t1' is an explicit backend endpoint; fm-control accepts an exact task id only"},
		{"a:b", "explicit backend endpoint"},
		{"../x", "'../x' is not a valid task id"},
		{"", "'' is not a valid task id"},
		{"-rf", "not starting with '-' or '.'"},
		// control bytes are echoed escaped, so the error stays on one line
		{"t1\nwindow=evil", `'t1\x0awindow=evil' is not a valid task id`},
		{"t1\x1b[2J", `'t1\x1b[2J' is not a valid task id`},
		{strings.Repeat("a", 65), "at most 64 characters"},
	}
	for _, c := range cases {
		err := CheckTaskArg("fm-control", c.id)
		if err == nil {
			t.Errorf("CheckTaskArg(%q) accepted", c.id)
			continue
		}
		said := err.Error()
		var hinted *HintedError
		if errors.As(err, &hinted) {
			said += "\n" + strings.Join(hinted.Hints(), "\n")
		}
		if !strings.Contains(said, c.want) {
			t.Errorf("CheckTaskArg(%q) = %q, want it or its hints to contain %q", c.id, said, c.want)
		}
		if strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Errorf("CheckTaskArg(%q) echoed a raw control byte: %q", c.id, err)
		}
		if !errors.Is(err, ErrBadTaskID) {
			t.Errorf("CheckTaskArg(%q) = %v, want ErrBadTaskID", c.id, err)
		}
	}
	if err := CheckTaskArg("fm-control", "t1"); err != nil {
		t.Errorf("CheckTaskArg(t1) = %v", err)
	}
}

func storeWith(t *testing.T, files map[string]string) Store {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Store{Dir: dir}
}

func wantLoadRefused(t *testing.T, s Store, id string, parts ...string) {
	t.Helper()
	task, err := s.LoadTask("fm-control", id)
	if err == nil {
		t.Fatalf("LoadTask(%q) accepted: %+v", id, task)
	}
	var kind *KindError
	if !errors.As(err, &kind) {
		t.Errorf("LoadTask(%q) error %v carries no kind", id, err)
	}
	said := err.Error()
	var hinted *HintedError
	if errors.As(err, &hinted) {
		said += "\n" + strings.Join(hinted.Hints(), "\n")
	}
	for _, p := range parts {
		if !strings.Contains(said, p) {
			t.Errorf("LoadTask(%q) error and hints %q lack %q", id, said, p)
		}
	}
}

const goodMeta = "window=fmses:fm-t1\nendpoint_task_id=t1\nharness=claude\nworktree=/w\n"

func TestLoadTaskReadsARecordWithItsRawBytes(t *testing.T) {
	s := storeWith(t, map[string]string{"t1.meta": goodMeta})
	task, err := s.LoadTask("fm-control", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if string(task.Raw) != goodMeta || task.Record.Get("window") != "fmses:fm-t1" || task.Path != s.MetaPath("t1") {
		t.Errorf("task = %+v", task)
	}
	if err := task.ValidateIdentity(); err != nil {
		t.Errorf("ValidateIdentity: %v", err)
	}
}

func TestLoadTaskMissing(t *testing.T) {
	s := storeWith(t, nil)
	wantLoadRefused(t, s, "t1", "no task 't1' in "+s.Dir, "to list them: fm-control list", "fm-spawn t1 "+SpawnFlags)
}

func TestLoadTaskWindowLabelHintsTheRealID(t *testing.T) {
	s := storeWith(t, map[string]string{"t1.meta": goodMeta})
	wantLoadRefused(t, s, "fm-t1", "'fm-t1' is a window label, not a task id; pass the exact task id 't1'")
	// without t1.meta the label is just a missing task
	wantLoadRefused(t, storeWith(t, nil), "fm-t1", "no task 'fm-t1'")
}

func TestLoadTaskEmptyFile(t *testing.T) {
	wantLoadRefused(t, storeWith(t, map[string]string{"t1.meta": ""}), "t1", "is empty")
	wantLoadRefused(t, storeWith(t, map[string]string{"t1.meta": "\n \n"}), "t1", "is empty")
}

func TestLoadTaskBinaryFile(t *testing.T) {
	wantLoadRefused(t, storeWith(t, map[string]string{"t1.meta": "window=a\x00\x01\x02\xff"}), "t1", "malformed", "NUL")
	wantLoadRefused(t, storeWith(t, map[string]string{"t1.meta": "\x7fELF\x02\x01"}), "t1", "malformed")
}

func TestLoadTaskDuplicatedWindowIsRefusedByValidateIdentity(t *testing.T) {
	s := storeWith(t, map[string]string{"t1.meta": goodMeta + "window=fmses:fm-evil\n"})
	task, err := s.LoadTask("fm-control", "t1")
	if err != nil {
		t.Fatal(err)
	}
	err = task.ValidateIdentity()
	if err == nil || !strings.Contains(err.Error(), "has 2 window= lines") {
		t.Fatalf("ValidateIdentity = %v, want the duplicate window refused", err)
	}
}

func TestValidateIdentityRefusals(t *testing.T) {
	cases := map[string]string{
		"endpoint_task_id=other\nwindow=s:fm-t1\nworktree=/w\n": "belongs to task other",
		"worktree=/w\n":            "no window= line",
		"window=s:fm-t1\n":         "no worktree= line",
		"window=  \nworktree=/w\n": "empty window=",
		"window=s:fm-t1\nworktree=/w\nharness=a\nharness=b\n":        "has 2 harness= lines",
		"window=s:fm-t1\nworktree=/w\nbackend=tmux\nbackend=herdr\n": "has 2 backend= lines",
	}
	for body, want := range cases {
		s := storeWith(t, map[string]string{"t1.meta": body})
		task, err := s.LoadTask("fm-control", "t1")
		if err != nil {
			t.Fatalf("LoadTask(%q): %v", body, err)
		}
		if err := task.ValidateIdentity(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("record %q: ValidateIdentity = %v, want %q", body, err, want)
		}
	}
}

// inotifyOpens watches path and reports whether anything opened or read it.
func inotifyOpens(t *testing.T, path string) func() bool {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify unavailable: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_OPEN|syscall.IN_ACCESS); err != nil {
		t.Skipf("inotify watch: %v", err)
	}
	return func() bool {
		buf := make([]byte, 4096)
		n, err := syscall.Read(fd, buf)
		if err != nil || n < syscall.SizeofInotifyEvent {
			return false
		}
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[0]))
		return ev.Mask&(syscall.IN_OPEN|syscall.IN_ACCESS) != 0
	}
}

func TestLoadTaskRefusesASymlinkWithoutReadingItsTarget(t *testing.T) {
	s := storeWith(t, nil)
	target := filepath.Join(t.TempDir(), "elsewhere.meta")
	if err := os.WriteFile(target, []byte(goodMeta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, s.MetaPath("t1")); err != nil {
		t.Fatal(err)
	}
	opened := inotifyOpens(t, target)
	wantLoadRefused(t, s, "t1", "symlink")
	if opened() {
		t.Fatal("LoadTask opened the symlink's target")
	}
	// the watch itself works: reading the target is seen
	if _, err := os.ReadFile(target); err != nil {
		t.Fatal(err)
	}
	if !opened() {
		t.Fatal("inotify did not see a real read; the check above proves nothing")
	}
}

func TestLoadTaskRefusesADirectory(t *testing.T) {
	s := storeWith(t, nil)
	if err := os.Mkdir(s.MetaPath("t1"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantLoadRefused(t, s, "t1", "not a regular file", "directory")
}

func TestLoadTaskRefusesANamedPipeWithoutBlocking(t *testing.T) {
	s := storeWith(t, nil)
	if err := syscall.Mkfifo(s.MetaPath("t1"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	wantLoadRefused(t, s, "t1", "named pipe")
}

func TestLoadTaskUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a mode-000 file, so the refusal cannot be provoked")
	}
	s := storeWith(t, map[string]string{"t1.meta": goodMeta})
	if err := os.Chmod(s.MetaPath("t1"), 0); err != nil {
		t.Fatal(err)
	}
	wantLoadRefused(t, s, "t1", "cannot be read (permission denied)")
}

func TestLoadTaskRefusesAHugeFileBySize(t *testing.T) {
	s := storeWith(t, nil)
	line := "k=" + strings.Repeat("v", 1021) + "\n"
	if err := os.WriteFile(s.MetaPath("t1"), []byte(strings.Repeat(line, 10*1024)), 0o644); err != nil {
		t.Fatal(err)
	}
	wantLoadRefused(t, s, "t1", "10485760 bytes, larger than the 65536")
	// just over the bound is refused; exactly at it is read
	at := []byte("k=" + strings.Repeat("v", MaxRecordBytes-3) + "\n")
	if err := os.WriteFile(s.MetaPath("t2"), at, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadTask("fm-control", "t2"); err != nil {
		t.Errorf("a %d-byte record was refused: %v", len(at), err)
	}
	if err := os.WriteFile(s.MetaPath("t3"), append(at, 'x'), 0o644); err != nil {
		t.Fatal(err)
	}
	wantLoadRefused(t, s, "t3", "larger than")
}

func TestStorePaths(t *testing.T) {
	s := Store{Dir: "/h/state"}
	for got, want := range map[string]string{
		s.MetaPath("t1"):      "/h/state/t1.meta",
		s.LockPath("t1"):      "/h/state/.control-t1.lock",
		s.SendLockPath("t1"):  "/h/state/.send-t1.lock",
		s.SendQueuePath("t1"): "/h/state/.sends-t1.lock",
		s.BusyStatePath("t1"): "/h/state/t1.busy-state",
		Label("t1"):           "fm-t1",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

func TestBusyStateReadsTheFirstWord(t *testing.T) {
	s := storeWith(t, map[string]string{"t1.busy-state": "  busy since 12:00\n", "t2.busy-state": ""})
	if got := s.BusyState("t1"); got != "busy" {
		t.Errorf("BusyState(t1) = %q", got)
	}
	if s.BusyState("t2") != "" || s.BusyState("t3") != "" {
		t.Error("empty or missing busy-state must read as empty")
	}
	if err := s.RetireBusy("t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.BusyStatePath("t1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RetireBusy left %s", s.BusyStatePath("t1"))
	}
	if err := s.RetireBusy("t1"); err != nil {
		t.Errorf("RetireBusy of an absent record: %v", err)
	}
}
