package proc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
)

func TestParseProcStatCommWithSpacesAndParens(t *testing.T) {
	stat := "4242 (my (odd) comm) x) T 1 4240 4239 34817 4240 4194560 0 0 0 0 0 0 0 0 20 0 1 0\n"
	p, tty, ok := parseProcStat([]byte(stat))
	if !ok {
		t.Fatal("parseProcStat refused a valid line")
	}
	want := Process{PID: 4242, PPID: 1, PGID: 4240, TPGID: 4240, State: 'T', Comm: "my (odd) comm) x"}
	if !reflect.DeepEqual(p, want) || tty != 34817 {
		t.Errorf("got %+v tty=%d, want %+v tty=34817", p, tty, want)
	}
	for _, bad := range []string{"", "4242 no parens S 1 2 3 4 5", "x (c) S 1 2 3 4 5", "1 (c) S 1 2", "1 (c)", ") 1 (c"} {
		if p, _, ok := parseProcStat([]byte(bad)); ok {
			t.Errorf("parseProcStat(%q) = %+v, want refused", bad, p)
		}
	}
}

// ttyNr is the kernel's 32-bit tty_nr encoding; rdev is glibc's 64-bit
// makedev, which st_rdev uses.
func ttyNr(major, minor uint64) uint64 {
	return major<<8 | minor&0xff | (minor&0xfff00)<<12
}

func rdev(major, minor uint64) uint64 {
	return (major&0xfff)<<8 | (major&^0xfff)<<32 | minor&0xff | (minor&^0xff)<<12
}

func TestDevNumberEncodingsAgree(t *testing.T) {
	pairs := [][2]uint64{{136, 0}, {136, 5}, {136, 255}, {136, 256}, {136, 300}, {4, 1}, {5, 1}, {204, 64}, {4095, 1048575}}
	seen := map[uint64][2]uint64{}
	for _, p := range pairs {
		a, b := devNumber(ttyNr(p[0], p[1])), devNumber(rdev(p[0], p[1]))
		if a != b {
			t.Errorf("major %d minor %d: tty_nr form %#x != st_rdev form %#x", p[0], p[1], a, b)
		}
		if other, dup := seen[a]; dup {
			t.Errorf("%v and %v normalise to the same device %#x", p, other, a)
		}
		seen[a] = p
	}
}

// TestProcFSOnTTYFiltersAFakeProcRoot uses /dev/null (1,3) as the terminal
// and a fake /proc holding rows on it and on another device.
func TestProcFSOnTTYFiltersAFakeProcRoot(t *testing.T) {
	root := t.TempDir()
	onNull := ttyNr(1, 3)
	write := func(pid, stat, cmdline string) {
		dir := filepath.Join(root, pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if stat != "" {
			os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
		}
		if cmdline != "" {
			os.WriteFile(filepath.Join(dir, "cmdline"), []byte(cmdline), 0o644)
		}
	}
	write("100", fmt.Sprintf("100 (node) S 1 100 100 %d 100 0", onNull), "node\x00/x/codex.js\x00")
	write("101", fmt.Sprintf("101 (bash) S 1 101 101 %d 100 0", onNull), "")
	write("102", fmt.Sprintf("102 (vim) S 1 102 102 %d 102 0", ttyNr(136, 3)), "vim\x00")
	write("103", "", "")      // exited while listed: no stat
	write("self", "junk", "") // non-numeric entries are skipped
	procs, err := FS{Root: root}.OnTTY(context.Background(), "/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(procs, func(a, b Process) int { return a.PID - b.PID })
	want := []Process{
		{PID: 100, PPID: 1, PGID: 100, TPGID: 100, State: 'S', Comm: "node", Argv: []string{"node", "/x/codex.js"}},
		{PID: 101, PPID: 1, PGID: 101, TPGID: 100, State: 'S', Comm: "bash"},
	}
	if !reflect.DeepEqual(procs, want) {
		t.Errorf("OnTTY = %+v\nwant %+v", procs, want)
	}
	if _, err := (FS{Root: root}).OnTTY(context.Background(), "/dev/pts/no-such"); err == nil {
		t.Error("OnTTY of a missing tty succeeded")
	}
	one, err := FS{Root: root}.Process(context.Background(), 100)
	if err != nil || !reflect.DeepEqual(one, want[0]) {
		t.Errorf("Process(100) = %+v, %v; want %+v", one, err, want[0])
	}
	for _, pid := range []int{103, 999} {
		if p, err := (FS{Root: root}).Process(context.Background(), pid); err == nil {
			t.Errorf("Process(%d) = %+v, want an error", pid, p)
		}
	}
	// Stat is Process without the cmdline.
	bare := want[0]
	bare.Argv = nil
	if st, err := (FS{Root: root}).Stat(context.Background(), 100); err != nil || !reflect.DeepEqual(st, bare) {
		t.Errorf("Stat(100) = %+v, %v; want %+v", st, err, bare)
	}
}

// OnTTYUnder reads only the root's tree: a process on the terminal outside
// it is not read, and one inside it on another terminal is left out.
func TestProcFSOnTTYUnderWalksOneTree(t *testing.T) {
	root := t.TempDir()
	onNull := ttyNr(1, 3)
	write := func(pid, stat, children string) {
		dir := filepath.Join(root, pid)
		if err := os.MkdirAll(filepath.Join(dir, "task", pid), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
		os.WriteFile(filepath.Join(dir, "task", pid, "children"), []byte(children), 0o644)
	}
	write("10", fmt.Sprintf("10 (bash) S 1 10 10 %d 12 0", onNull), "11 12 ")
	write("11", fmt.Sprintf("11 (script) S 10 11 10 %d 11 0", ttyNr(136, 4)), "")
	write("12", fmt.Sprintf("12 (claude) S 10 12 10 %d 12 0", onNull), "13")
	write("13", fmt.Sprintf("13 (node) S 12 12 10 %d 12 0", onNull), "")
	write("20", fmt.Sprintf("20 (vim) S 1 20 20 %d 12 0", onNull), "")
	procs, err := FS{Root: root}.OnTTYUnder(context.Background(), "/dev/null", 10)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range procs {
		pids = append(pids, p.PID)
	}
	slices.Sort(pids)
	if !slices.Equal(pids, []int{10, 12, 13}) {
		t.Errorf("OnTTYUnder = %v, want [10 12 13]", pids)
	}
	if _, err := (FS{Root: root}).OnTTYUnder(context.Background(), "/dev/null", 99); err == nil {
		t.Error("OnTTYUnder of a missing root succeeded")
	}
}

func TestParsePS(t *testing.T) {
	out := "  100   100   100 Ss+  bash\n  101   101   100 T    claude code\nbogus line\n  x 1 2 S y\n"
	got := parsePS([]byte(out))
	want := []Process{
		{PID: 100, PGID: 100, TPGID: 100, State: 'S', Comm: "bash"},
		{PID: 101, PGID: 101, TPGID: 100, State: 'T', Comm: "claude code"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsePS = %+v, want %+v", got, want)
	}
}

type psStub struct {
	out backends.Output
	err error
	cmd *backends.Cmd
}

func (s *psStub) Run(_ context.Context, c backends.Cmd) (backends.Output, error) {
	*s.cmd = c
	return s.out, s.err
}

func TestPSTableEmptyAndFailure(t *testing.T) {
	var seen backends.Cmd
	empty := &psStub{out: backends.Output{ExitCode: 1}, err: &backends.RunError{ExitCode: 1}, cmd: &seen}
	procs, err := PS{Runner: empty}.OnTTY(context.Background(), "/dev/pts/7")
	if err != nil || procs != nil {
		t.Errorf("ps exit 1 with no rows = %v, %v; want an empty table", procs, err)
	}
	if seen.Path != "ps" || !slices.Equal(seen.Args[:2], []string{"-t", "pts/7"}) {
		t.Errorf("ps called as %v", seen)
	}
	broken := &psStub{out: backends.Output{ExitCode: 2}, err: &backends.RunError{ExitCode: 2, Stderr: "bad"}, cmd: &seen}
	if _, err := (PS{Runner: broken}).OnTTY(context.Background(), "/dev/pts/7"); err == nil {
		t.Error("ps exit 2 was read as an empty table")
	}
}

type procKey struct {
	PID, PGID, TPGID int
	Comm             string
}

func keys(ps []Process) []procKey {
	out := make([]procKey, len(ps))
	for i, p := range ps {
		out[i] = procKey{p.PID, p.PGID, p.TPGID, p.Comm}
	}
	slices.SortFunc(out, func(a, b procKey) int { return a.PID - b.PID })
	return out
}

// TestProcFSAndPSAgreeOnARealTTY runs a private tmux server whose pane runs
// sleep, and reads that pane's terminal both ways.
func TestProcFSAndPSAgreeOnARealTTY(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("FS is Linux-only")
	}
	for _, bin := range []string{"tmux", "ps"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed", bin)
		}
	}
	buf := make([]byte, 6)
	rand.Read(buf)
	sock := "fmproc-" + hex.EncodeToString(buf)
	// the socket lives in a directory of the test's own, so nothing outlives it
	sockDir := t.TempDir()
	tmux := func(args ...string) (string, error) {
		cmd := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = append(os.Environ(), "TMUX_TMPDIR="+sockDir, "TMUX=")
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := tmux("new-session", "-d", "-s", "s", "-x", "80", "-y", "24", "sleep 60"); err != nil {
		t.Skipf("cannot start a tmux server: %v %s", err, out)
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	tty, err := tmux("display-message", "-p", "-t", "s", "#{pane_tty}")
	if err != nil || !strings.HasPrefix(tty, "/dev/") {
		t.Fatalf("pane_tty = %q, %v", tty, err)
	}
	pidText, err := tmux("display-message", "-p", "-t", "s", "#{pane_pid}")
	pid, _ := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		t.Fatalf("pane_pid = %q, %v", pidText, err)
	}
	ctx := context.Background()
	procfs := FS{Root: "/proc"}
	ps := PS{Runner: backends.NewExecRunner("")}
	var a, b []Process
	deadline := time.Now().Add(5 * time.Second)
	for {
		a, err = procfs.OnTTY(ctx, tty)
		if err != nil {
			t.Fatalf("FS: %v", err)
		}
		b, err = ps.OnTTY(ctx, tty)
		if err != nil {
			t.Fatalf("PS: %v", err)
		}
		// wait for the pane's shell to have exec'd sleep and settled: the
		// kernel names the new image before it lays out its arguments, so
		// a sleep read mid-exec has its comm and no argv yet
		if len(a) > 0 && slices.Equal(keys(a), keys(b)) && slices.ContainsFunc(a, func(p Process) bool { return p.Comm == "sleep" && len(p.Argv) > 0 }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("FS and ps disagree on %s:\nprocfs %+v\nps     %+v", tty, keys(a), keys(b))
		}
		time.Sleep(50 * time.Millisecond)
	}
	under, err := procfs.OnTTYUnder(ctx, tty, pid)
	if err != nil || !slices.Equal(keys(under), keys(a)) {
		t.Errorf("OnTTYUnder(%s, %d) = %+v, %v; OnTTY = %+v", tty, pid, keys(under), err, keys(a))
	}
	for i := range a {
		if !a[i].Foreground() {
			continue
		}
		if a[i].Comm == "sleep" && len(a[i].Argv) == 0 {
			t.Errorf("FS read no argv for sleep: %+v", a[i])
		}
	}
	for _, p := range a {
		x, err1 := procfs.Process(ctx, p.PID)
		y, err2 := ps.Process(ctx, p.PID)
		if err1 != nil || err2 != nil || x.PGID != y.PGID || x.TPGID != y.TPGID || x.Comm != y.Comm || x.State != y.State {
			t.Errorf("Process(%d): procfs %+v (%v), ps %+v (%v)", p.PID, x, err1, y, err2)
		}
	}
	if obs := ClassifyPane(a, nil, "sleep"); obs.State != backends.StateUnattributed {
		t.Errorf("a pane running sleep classifies as %s, want unattributed", obs.State)
	}
}

func TestParentPIDReadsThisProcessParent(t *testing.T) {
	ppid, err := (FS{Root: "/proc"}).ParentPID(os.Getpid())
	if _, statErr := os.Stat("/proc/self/stat"); statErr != nil {
		t.Skip("no /proc")
	}
	if err != nil || ppid != os.Getppid() {
		t.Errorf("ParentPID(self) = %d, %v; want %d", ppid, err, os.Getppid())
	}
	if _, err := (FS{Root: "/proc"}).ParentPID(-5); err == nil {
		t.Error("ParentPID of no process gave no error")
	}
}
