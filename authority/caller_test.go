package authority

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fmctl/state"
)

// fakeProcs is a process table of pid -> parent pid; it counts its reads.
type fakeProcs struct {
	parent map[int]int
	reads  int
}

func (f *fakeProcs) ParentPID(pid int) (int, error) {
	f.reads++
	p, ok := f.parent[pid]
	if !ok {
		return 0, errors.New("no such process")
	}
	return p, nil
}

// writeRecord writes state/<id>.meta under dir with the given lines.
func writeRecord(t *testing.T, dir, id string, lines ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "window=s:fm-" + id + "\nworktree=/wt/" + id + "\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, id+".meta"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A tmux server (pid 10) with two panes, t1's shell 200 and t2's shell 300;
// under t2's shell its agent 310 runs a tool shell 320, which runs
// fm-control 330. The operator's fm-control 900 runs from a shell 800 the
// server does not know.
func paneTable() *fakeProcs {
	return &fakeProcs{parent: map[int]int{
		10: 1, 200: 10, 210: 200, 300: 10, 310: 300, 320: 310, 330: 320,
		800: 1, 900: 800,
	}}
}

func twoTasks(t *testing.T) state.Store {
	dir := filepath.Join(t.TempDir(), "state")
	writeRecord(t, dir, "t1", "tmux_pane_pid=200")
	writeRecord(t, dir, "t2", "tmux_pane_pid=300", "grants=exit@t1 read@children")
	writeRecord(t, dir, "t3") // no pane pid recorded (herdr, zellij, an old record)
	return state.Store{Dir: dir}
}

func TestResolveFindsTheTaskWhosePaneTheCallerDescendsFrom(t *testing.T) {
	store := twoTasks(t)
	procs := paneTable()
	c, err := Resolver{Store: store, Procs: procs, Self: 330}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if c.Task != "t2" || c.PanePID != 300 || c.Crew != "" {
		t.Fatalf("caller = %+v, want task t2 at pane pid 300", c)
	}
	if got := FormatGrants(c.Grants); got != "exit@t1 read@children" {
		t.Errorf("grants = %q, want t2's recorded ones", got)
	}
	// The walk reads the caller's ancestors and nothing else: 330 320 310 300 10.
	if procs.reads != 5 {
		t.Errorf("walk read %d processes, want 5 (the ancestry only)", procs.reads)
	}
}

// list reads every record once and hands the bytes to the scan: the scan
// decides from those bytes, not from a second read, and the records it
// reads itself do not overwrite them.
func TestResolveScansTheRecordsItWasHandedWithoutReadingThemAgain(t *testing.T) {
	store := twoTasks(t)
	handed := []byte("window=s:fm-t1\nworktree=/wt/t1\ntmux_pane_pid=300\ngrants=exit@t3\n")
	read := map[string][]byte{"t1": handed}
	c, err := Resolver{Store: store, Procs: paneTable(), Self: 330, Read: read}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	// On disk t1's pane is 200 and t2's 300: the handed t1 names 300 too,
	// and the first record scanned with the nearest pane is the caller.
	if c.Task != "t1" || FormatGrants(c.Grants) != "exit@t3" {
		t.Fatalf("caller = %+v, want t1 with the grants of the bytes handed in", c)
	}
	if !bytes.Equal(read["t1"], handed) || string(handed) != "window=s:fm-t1\nworktree=/wt/t1\ntmux_pane_pid=300\ngrants=exit@t3\n" {
		t.Fatalf("the handed record changed to %q", read["t1"])
	}
}

func TestResolveAsTheTaskItselfReadsOnlyItsRecord(t *testing.T) {
	store := twoTasks(t)
	// A record naming the agent's own pid as a pane would be the nearest
	// match for Resolve; ResolveAs, asked for t2, never reads it.
	writeRecord(t, store.Dir, "t4", "tmux_pane_pid=310")
	if c, _ := (Resolver{Store: store, Procs: paneTable(), Self: 330}).Resolve(); c.Task != "t4" {
		t.Fatalf("Resolve = %+v, want t4 (the nearest recorded pane)", c)
	}
	c, err := Resolver{Store: store, Procs: paneTable(), Self: 330}.ResolveAs("t2")
	if err != nil || c.Task != "t2" || c.PanePID != 300 || FormatGrants(c.Grants) != "exit@t1 read@children" {
		t.Fatalf("ResolveAs(t2) = %+v, %v; want t2 at pane pid 300 with its grants", c, err)
	}
}

func TestResolveAsAnotherTaskFindsTheRealCaller(t *testing.T) {
	store := twoTasks(t)
	for _, tc := range []struct {
		self      int
		claims    string
		want      string
		wantPanes int
	}{
		{330, "t1", "t2", 300}, // t2's agent claiming t1's events is t2
		{330, "t3", "t2", 300}, // t3 records no pane
		{330, "t9", "t2", 300}, // no record at all
		{900, "t2", "", 0},     // the operator
	} {
		c, err := Resolver{Store: store, Procs: paneTable(), Self: tc.self}.ResolveAs(tc.claims)
		if err != nil || c.Task != tc.want || c.PanePID != tc.wantPanes {
			t.Errorf("pid %d as %s: %+v, %v; want task %q at pane pid %d", tc.self, tc.claims, c, err, tc.want, tc.wantPanes)
		}
	}
	if _, err := (Resolver{Store: store, Procs: paneTable(), Self: 777}).ResolveAs("t2"); err == nil {
		t.Error("a caller whose own process cannot be read resolved without an error")
	}
}

func TestResolveOutsideEveryPaneIsTheOperator(t *testing.T) {
	store := twoTasks(t)
	for _, self := range []int{900, 10} { // a plain shell; the server itself
		c, err := Resolver{Store: store, Procs: paneTable(), Self: self}.Resolve()
		if err != nil || !c.Operator() {
			t.Errorf("caller from %d = %+v, %v; want the operator", self, c, err)
		}
	}
	if c, err := (Resolver{Store: store, Self: 330}).Resolve(); err != nil || !c.Operator() {
		t.Errorf("with no process table: %+v, %v; want the operator", c, err)
	}
}

func TestResolveFindsATaskByTheBackendNeutralPanePID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	// t1 is a tmux task (tmux_pane_pid); h2 a herdr task whose record holds
	// the shell pid herdr reported (pane_pid); z3 a zellij task, which
	// records none.
	writeRecord(t, dir, "t1", "tmux_pane_pid=200")
	writeRecord(t, dir, "h2", "backend=herdr", "pane_pid=300")
	writeRecord(t, dir, "z3", "backend=zellij")
	store := state.Store{Dir: dir}
	for self, want := range map[int]string{330: "h2", 210: "t1", 900: ""} {
		c, err := Resolver{Store: store, Procs: paneTable(), Self: self}.Resolve()
		if err != nil || c.Task != want {
			t.Errorf("caller from %d = %+v, %v; want task %q", self, c, err, want)
		}
	}
	c, _ := Resolver{Store: store, Procs: paneTable(), Self: 330}.Resolve()
	if c.PanePID != 300 {
		t.Errorf("matched pane pid %d, want h2's recorded 300", c.PanePID)
	}
}

func TestResolveTakesTheNearestPaneAndIgnoresPidOne(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	// A nested multiplexer: t2's pane (300) holds a server whose pane 320
	// is t4's. The nearest pane is the caller's.
	writeRecord(t, dir, "t2", "tmux_pane_pid=300")
	writeRecord(t, dir, "t4", "tmux_pane_pid=320")
	writeRecord(t, dir, "bad", "tmux_pane_pid=1")
	c, err := Resolver{Store: state.Store{Dir: dir}, Procs: paneTable(), Self: 330}.Resolve()
	if err != nil || c.Task != "t4" {
		t.Fatalf("caller = %+v, %v; want t4, the nearest pane", c, err)
	}
	c, err = Resolver{Store: state.Store{Dir: dir}, Procs: paneTable(), Self: 900}.Resolve()
	if err != nil || !c.Operator() {
		t.Errorf("a record naming pid 1 made %+v (%v) a task; every process descends from init", c, err)
	}
}

func TestResolveWhenTheCallerCannotBeReadIsAnError(t *testing.T) {
	store := twoTasks(t)
	if c, err := (Resolver{Store: store, Procs: paneTable(), Self: 4242}).Resolve(); err == nil {
		t.Errorf("unreadable caller resolved to %+v, want an error", c)
	}
	// An ancestor that exited mid-walk ends the chain: 331's parent 999 is gone.
	procs := paneTable()
	procs.parent[331] = 999
	if c, err := (Resolver{Store: store, Procs: procs, Self: 331}).Resolve(); err != nil || !c.Operator() {
		t.Errorf("orphaned chain = %+v, %v; want the operator", c, err)
	}
}

func TestResolveAttributesASecondmatesCrewToTheSecondmate(t *testing.T) {
	root := t.TempDir()
	smHome := filepath.Join(root, "sm1-home")
	parent := filepath.Join(root, "home", "state")
	writeRecord(t, parent, "t1", "tmux_pane_pid=200")
	if err := os.WriteFile(filepath.Join(parent, "sm1.meta"), []byte("window=s:fm-sm1\nworktree="+smHome+"\nkind=secondmate\ntmux_pane_pid=500\ngrants=status@t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// sm1's crew member c1 runs in pane 300, recorded in sm1's own home.
	writeRecord(t, filepath.Join(smHome, "state"), "c1", "tmux_pane_pid=300")
	procs := paneTable()
	procs.parent[500], procs.parent[510] = 10, 500

	c, err := Resolver{Store: state.Store{Dir: parent}, Procs: procs, Self: 330}.Resolve()
	if err != nil || c.Task != "sm1" || c.Crew != "c1" || FormatGrants(c.Grants) != "status@t1" {
		t.Fatalf("crew member in the parent home = %+v, %v; want sm1 through c1, with sm1's grants", c, err)
	}
	if !strings.Contains(c.String(), "crew task c1") {
		t.Errorf("caller named %q, want its crew task said", c.String())
	}
	// In its own home the secondmate is a firstmate: the operator there,
	// while its crew member is a task.
	own := state.Store{Dir: filepath.Join(smHome, "state")}
	if c, err := (Resolver{Store: own, Procs: procs, Self: 510}).Resolve(); err != nil || !c.Operator() {
		t.Errorf("secondmate in its own home = %+v, %v; want the operator", c, err)
	}
	if c, err := (Resolver{Store: own, Procs: procs, Self: 330}).Resolve(); err != nil || c.Task != "c1" {
		t.Errorf("crew member in the secondmate's home = %+v, %v; want task c1", c, err)
	}
	// In the parent home the secondmate itself is task sm1.
	if c, err := (Resolver{Store: state.Store{Dir: parent}, Procs: procs, Self: 510}).Resolve(); err != nil || c.Task != "sm1" || c.Crew != "" {
		t.Errorf("secondmate in the parent home = %+v, %v; want task sm1", c, err)
	}
}

func TestResolveFollowsNoSymlinkedSecondmateState(t *testing.T) {
	root := t.TempDir()
	smHome := filepath.Join(root, "sm1-home")
	parent := filepath.Join(root, "home", "state")
	writeRecord(t, filepath.Join(root, "elsewhere"), "c1", "tmux_pane_pid=300")
	if err := os.MkdirAll(smHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(smHome, "state")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "sm1.meta"), []byte("window=s:fm-sm1\nworktree="+smHome+"\nkind=secondmate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := (Resolver{Store: state.Store{Dir: parent}, Procs: paneTable(), Self: 330}).Resolve(); !c.Operator() {
		t.Errorf("resolved %+v through a symlinked state dir", c)
	}
}

// BenchmarkResolveInAHomeOf500Tasks is the price every invocation pays: the
// real /proc walk of this process's ancestry and 500 record reads.
func BenchmarkResolveInAHomeOf500Tasks(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		id := "t" + strconv.Itoa(i)
		body := "window=s:fm-" + id + "\nendpoint_task_id=" + id + "\nworktree=/wt/" + id + "\nharness=claude\nkind=ship\nspawn_gen=g1\ntmux_pane_id=%1\ntmux_window_id=@1\ntmux_pane_pid=" + strconv.Itoa(4000000+i) + "\n"
		if err := os.WriteFile(filepath.Join(dir, id+".meta"), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	r := Resolver{Store: state.Store{Dir: dir}, Procs: procStat{}, Self: os.Getpid()}
	b.Run("any caller", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if c, err := r.Resolve(); err != nil || !c.Operator() {
				b.Fatalf("%+v, %v", c, err)
			}
		}
	})
	// A hook's agent-event: the task's pane is the caller's parent here.
	id := "t250"
	body := "window=s:fm-" + id + "\nendpoint_task_id=" + id + "\nharness=claude\nkind=ship\nspawn_gen=g1\ntmux_pane_pid=" + strconv.Itoa(os.Getppid()) + "\n"
	if err := os.WriteFile(filepath.Join(dir, id+".meta"), []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("the task itself", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if c, err := r.ResolveAs(id); err != nil || c.Task != id {
				b.Fatalf("%+v, %v", c, err)
			}
		}
	})
}

// procStat reads parents from the real /proc (backends/proc.FS does the
// same; authority does not import backends).
type procStat struct{}

func (procStat) ParentPID(pid int) (int, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return strconv.Atoi(f[1])
}
