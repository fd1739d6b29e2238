package herdr

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fmctl/backends"
	"fmctl/harness"
	"fmctl/state"
	herdrfake "fmctl/tests/fakes/herdr"
)

// herdrDirRunner runs the fake herdr with its state directory in the
// environment, the way a testscript suite will.
type herdrDirRunner struct{ dir string }

func (r herdrDirRunner) Run(ctx context.Context, c backends.Cmd) (backends.Output, error) {
	c.Env = append(append([]string(nil), c.Env...), "FAKE_HERDR_DIR="+r.dir)
	return (&backends.ExecRunner{}).Run(ctx, c)
}

type herdrFixture struct {
	t    *testing.T
	bin  string
	dir  string
	runs *backends.CountingRunner
	h    *Adapter
}

// herdrBin is the fake herdr (tests/fakes/herdr/cmd/herdr), built once by
// TestMain for every test here.
var herdrBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fmctl-herdr-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	herdrBin = filepath.Join(dir, "herdr")
	if err := buildHerdrFake(herdrBin); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildHerdrFake(bin string) error {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	build := exec.Command("go", "build", "-o", bin, "./tests/fakes/herdr/cmd/herdr")
	build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build fake herdr: %w\n%s", err, out)
	}
	return nil
}

func newHerdrFixture(t *testing.T) *herdrFixture {
	dir := t.TempDir()
	runs := &backends.CountingRunner{Inner: herdrDirRunner{dir}}
	return &herdrFixture{t: t, bin: herdrBin, dir: dir, runs: runs, h: New(runs, Options{Binary: herdrBin})}
}

func (fx *herdrFixture) create(label, dir string) backends.Endpoint {
	fx.t.Helper()
	fields, err := fx.h.Create(context.Background(), backends.CreateSpec{TaskID: strings.TrimPrefix(label, "fm-"), Label: label, Dir: dir})
	if err != nil {
		fx.t.Fatalf("Create %s: %v", label, err)
	}
	ep := backends.Endpoint{Backend: "herdr", Fields: map[string]string{}}
	for _, f := range fields {
		ep.Fields[f.Key] = f.Value
	}
	ep.Target = ep.Fields["window"]
	return ep
}

func (fx *herdrFixture) touch(name string) {
	if err := os.WriteFile(filepath.Join(fx.dir, name), nil, 0o644); err != nil {
		fx.t.Fatal(err)
	}
}

func (fx *herdrFixture) log(name string) []string {
	b, _ := os.ReadFile(filepath.Join(fx.dir, name))
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func (fx *herdrFixture) state() *herdrfake.State {
	st, err := herdrfake.LoadState(fx.dir)
	if err != nil {
		fx.t.Fatal(err)
	}
	return st
}

// submit types a line and presses Enter, as a launch would.
func (fx *herdrFixture) submit(ep backends.Endpoint, line string) {
	fx.t.Helper()
	ctx := context.Background()
	if err := fx.h.SendText(ctx, ep, line); err != nil {
		fx.t.Fatal(err)
	}
	if err := fx.h.SendKey(ctx, ep, harness.KeyEnter); err != nil {
		fx.t.Fatal(err)
	}
}

func (fx *herdrFixture) lastLine(ep backends.Endpoint) string {
	fx.t.Helper()
	s, err := fx.h.Capture(context.Background(), ep)
	if err != nil {
		fx.t.Fatal(err)
	}
	if s.Cursor {
		fx.t.Error("herdr has no cursor row, yet Capture reported one")
	}
	if len(s.Lines) == 0 {
		return ""
	}
	return s.Lines[len(s.Lines)-1]
}

func TestCreateFirstTabTakesOverTheNewWorkspace(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	wt := t.TempDir()
	fields, err := fx.h.Create(ctx, backends.CreateSpec{TaskID: "t1", Label: "fm-t1", Dir: wt})
	if err != nil {
		t.Fatal(err)
	}
	want := []backends.Field{{Key: "window", Value: "default:w1:p1"}, {Key: "herdr_session", Value: "default"}, {Key: "herdr_workspace_id", Value: "w1"},
		{Key: "herdr_tab_id", Value: "w1:t1"}, {Key: "herdr_pane_id", Value: "w1:p1"}}
	if len(fields) != len(want) {
		t.Fatalf("fields = %v, want %v", fields, want)
	}
	for i := range want {
		if fields[i] != want[i] {
			t.Errorf("field %d = %v, want %v", i, fields[i], want[i])
		}
	}
	if n := fx.runs.Calls(fx.bin); n != 6 {
		t.Errorf("Create into an empty session made %d herdr calls, want 6 (status, tab list, workspace list, workspace create, tab rename, pane process-info)", n)
	}
	ws := fx.state().Sessions["default"].Workspaces
	if len(ws) != 1 || ws[0].Label != "fmctl" || len(ws[0].Tabs) != 1 || ws[0].Tabs[0].Label != "fm-t1" {
		t.Fatalf("session layout after Create: %+v", ws)
	}
	if p := ws[0].Tabs[0].Panes[0]; p.Cwd != wt || p.Command != "bash" {
		t.Errorf("new pane cwd=%s command=%s, want %s bash", p.Cwd, p.Command, wt)
	}
	for _, line := range fx.log("calls.log") {
		if !strings.Contains(line, " --session default") {
			t.Errorf("call without an explicit --session: %s", line)
		}
	}
}

func TestGonePaneWhoseLabelLivesOnIsDrifted(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	wt := t.TempDir()
	live := fx.create("fm-t1", wt)
	stale := live
	stale.TaskID = "t1"
	stale.Worktree = wt
	stale.Target = "default:w1:p9" // a pane id from before a server restart
	if obs := fx.h.AgentState(ctx, stale); obs.State != backends.StateDrifted || !strings.Contains(obs.Detail, "fm-t1") {
		t.Fatalf("stale pane whose label lives on: %+v, want drifted", obs)
	}
	// The label in another directory is someone else's tab: the
	// task's endpoint is missing, not drifted onto it.
	elsewhere := stale
	elsewhere.Worktree = t.TempDir()
	if obs := fx.h.AgentState(ctx, elsewhere); obs.State != backends.StateMissing || !strings.Contains(obs.Detail, "outside the task's worktree") {
		t.Fatalf("a tab labelled fm-t1 in another directory: %+v, want missing", obs)
	}
	// A record with no worktree cannot tell: drifted, refused.
	unknown := stale
	unknown.Worktree = ""
	if obs := fx.h.AgentState(ctx, unknown); obs.State != backends.StateDrifted {
		t.Fatalf("no recorded worktree: %+v, want drifted", obs)
	}
	other := stale
	other.TaskID = "t2"
	if obs := fx.h.AgentState(ctx, other); obs.State != backends.StateMissing {
		t.Fatalf("gone pane with no labelled tab: %+v, want missing", obs)
	}
}

func TestCreateAddsTabsToTheExistingWorkspace(t *testing.T) {
	fx := newHerdrFixture(t)
	fx.create("fm-t1", t.TempDir())
	fx.runs.Reset()
	ep := fx.create("fm-t2", t.TempDir())
	if ep.Target != "default:w1:p2" || ep.Field("herdr_tab_id") != "w1:t2" || ep.Field("herdr_workspace_id") != "w1" {
		t.Errorf("second endpoint = %v", ep.Fields)
	}
	if n := fx.runs.Calls(fx.bin); n != 5 {
		t.Errorf("Create into an existing workspace made %d herdr calls, want 5", n)
	}
	if err := fx.h.ValidateRecord(ep); err != nil {
		t.Errorf("ValidateRecord of a created record: %v", err)
	}
}

func TestCreateRecordsTheShellPidHerdrReports(t *testing.T) {
	fx := newHerdrFixture(t)
	// Without a shell_pid (a pane herdr runs no process in) nothing is
	// recorded: a caller there cannot be told from the operator.
	if ep := fx.create("fm-t1", t.TempDir()); ep.Field(state.KeyPanePID) != "" {
		t.Errorf("pane_pid recorded without a shell_pid: %v", ep.Fields)
	}
	if err := os.WriteFile(filepath.Join(fx.dir, "shell-pid"), []byte("4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ep := fx.create("fm-t2", t.TempDir())
	if got := ep.Field(state.KeyPanePID); got != "4242" {
		t.Errorf("pane_pid = %q, want herdr's shell_pid 4242", got)
	}
	if err := fx.h.ValidateRecord(ep); err != nil {
		t.Errorf("ValidateRecord with a pane_pid: %v", err)
	}
	ep.Fields[state.KeyPanePID] = "-1"
	if err := fx.h.ValidateRecord(ep); err == nil || !strings.Contains(err.Error(), "not a process id") {
		t.Errorf("ValidateRecord of pane_pid=-1: %v, want refused", err)
	}
}

func TestCreateRefusesADuplicateLabel(t *testing.T) {
	fx := newHerdrFixture(t)
	fx.create("fm-t1", t.TempDir())
	if _, err := fx.h.Create(t.Context(), backends.CreateSpec{TaskID: "t1", Label: "fm-t1", Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "already labelled fm-t1") {
		t.Errorf("duplicate label: err = %v", err)
	}
	if tabs := fx.state().Sessions["default"].Workspaces[0].Tabs; len(tabs) != 1 {
		t.Errorf("a refused Create left %d tabs", len(tabs))
	}
}

func TestCreateRefusesAnInvalidSessionNameWithoutRunningHerdr(t *testing.T) {
	fx := newHerdrFixture(t)
	if _, err := fx.h.Create(t.Context(), backends.CreateSpec{TaskID: "t2", Label: "fm-t2", Dir: t.TempDir(), Container: "bad name"}); err == nil {
		t.Error("Create accepted an invalid herdr session name")
	}
	if n := fx.runs.Calls(fx.bin); n != 0 {
		t.Errorf("an invalid session name still ran herdr %d times", n)
	}
}

func TestCreateRefusesWithTheServerStopped(t *testing.T) {
	fx := newHerdrFixture(t)
	fx.touch("no-server")
	if _, err := fx.h.Create(t.Context(), backends.CreateSpec{TaskID: "t3", Label: "fm-t3", Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no running server") {
		t.Errorf("stopped server: err = %v", err)
	}
}

func TestCreateRefusesAnOldHerdr(t *testing.T) {
	ctx := t.Context()
	t.Setenv("FAKE_HERDR_PROTOCOL", "13")
	fx := newHerdrFixture(t)
	_, err := fx.h.Create(ctx, backends.CreateSpec{TaskID: "t1", Label: "fm-t1", Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "protocol 13") {
		t.Errorf("protocol 13: err = %v", err)
	}
	if n := fx.runs.Calls(fx.bin); n != 1 {
		t.Errorf("an old herdr was asked %d questions, want only status", n)
	}
}

func TestCreateInANamedSession(t *testing.T) {
	fx := newHerdrFixture(t)
	fx.h = New(fx.runs, Options{Binary: fx.bin, DefaultSession: "work"})
	ep := fx.create("fm-t1", t.TempDir())
	if ep.Target != "work:w1:p1" || ep.Field("herdr_session") != "work" {
		t.Errorf("endpoint = %v", ep.Fields)
	}
	if _, ok := fx.state().Sessions["default"]; ok {
		t.Error("a named-session Create touched the default session")
	}
}

func TestSendTextTypesIntoTheComposer(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	ep := fx.create("fm-t1", t.TempDir())
	fx.submit(ep, "grok --model opus") // a harness drawn with a bare "> " composer
	fx.runs.Reset()
	if err := fx.h.SendText(ctx, ep, "hello there"); err != nil {
		t.Fatal(err)
	}
	if got := fx.lastLine(ep); got != "> hello there" {
		t.Errorf("composer row = %q", got)
	}
	if n := fx.runs.Calls(fx.bin); n != 2 {
		t.Errorf("SendText + Capture made %d calls, want 2", n)
	}
	in := fx.log("input.log")
	if in[len(in)-1] != `text "hello there"` {
		t.Errorf("input.log ends %q", in[len(in)-1])
	}
}

func TestSendTextMultiLineIsOnePaste(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	ep := fx.create("fm-t1", t.TempDir())
	fx.submit(ep, "grok")
	fx.runs.Reset()
	if err := fx.h.SendText(ctx, ep, "line one\nline two"); err != nil {
		t.Fatal(err)
	}
	if n := fx.runs.Calls(fx.bin); n != 1 {
		t.Errorf("a multi-line SendText made %d calls, want 1", n)
	}
	in := fx.log("input.log")
	if want := `text "\x1b[200~line one\nline two\x1b[201~"`; in[len(in)-1] != want {
		t.Errorf("input.log ends %s, want %s", in[len(in)-1], want)
	}
	if got := fx.lastLine(ep); got != "> line one⏎line two" {
		t.Errorf("composer row = %q: the paste was split or submitted", got)
	}
}

func TestSendTextLongArrivesWhole(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	ep := fx.create("fm-t1", t.TempDir())
	fx.submit(ep, "codex")
	long := strings.Repeat("0123456789abcdef", 256) + "TAIL"
	if err := fx.h.SendText(ctx, ep, long); err != nil {
		t.Fatal(err)
	}
	p := fx.state().Sessions["default"].Workspaces[0].Tabs[0].Panes[0]
	if p.Composer != long {
		t.Errorf("composer holds %d bytes, want the whole %d", len(p.Composer), len(long))
	}
}

func TestSendTextRefusesWithoutRunningHerdr(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	ep := fx.create("fm-t1", t.TempDir())
	fx.runs.Reset()
	for _, text := range []string{"--session", "--session=other", "--remote=host", "nul\x00byte", "a\nb\x1b[201~c"} {
		if err := fx.h.SendText(ctx, ep, text); err == nil {
			t.Errorf("SendText(%q) was sent", text)
		}
	}
	if err := fx.h.SendText(ctx, ep, ""); err != nil {
		t.Errorf("empty SendText: %v", err)
	}
	if n := fx.runs.Calls(fx.bin); n != 0 {
		t.Errorf("refused sends still ran herdr %d times", n)
	}
}

func TestSendKeyMapsEachNamedKey(t *testing.T) {
	fx := newHerdrFixture(t)
	ep := fx.create("fm-t1", t.TempDir())
	for _, k := range harness.NamedKeys {
		if err := fx.h.SendKey(t.Context(), ep, k); err != nil {
			t.Errorf("SendKey %s: %v", k, err)
		}
	}
	in := strings.Join(fx.log("input.log"), "|")
	if want := "key escape|key enter|key ctrl+c|key ctrl+u"; in != want {
		t.Errorf("input.log = %s, want %s", in, want)
	}
}

func TestSendKeyCtrlUClearsTheComposer(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	ep := fx.create("fm-t1", t.TempDir())
	if err := fx.h.SendText(ctx, ep, "draft"); err != nil {
		t.Fatal(err)
	}
	if err := fx.h.SendKey(ctx, ep, harness.KeyCtrlU); err != nil {
		t.Fatal(err)
	}
	if got := fx.lastLine(ep); got != ">" {
		t.Errorf("after C-u the composer row is %q", got)
	}
}

func TestSendKeyRefusesAnUnmappedKeyWithoutRunningHerdr(t *testing.T) {
	fx := newHerdrFixture(t)
	ep := fx.create("fm-t1", t.TempDir())
	fx.runs.Reset()
	if err := fx.h.SendKey(t.Context(), ep, harness.Key("F1")); err == nil || fx.runs.Calls(fx.bin) != 0 {
		t.Errorf("an unmapped key: err=%v calls=%d", err, fx.runs.Calls(fx.bin))
	}
}

func TestAgentStateOfAShellPaneIsDead(t *testing.T) {
	fx := newHerdrFixture(t)
	wt := t.TempDir()
	ep := fx.create("fm-t1", wt)
	fx.runs.Reset()
	obs := fx.h.AgentState(t.Context(), ep)
	if obs.State != backends.StateDead || obs.CurrentPath != wt {
		t.Errorf("shell pane: %+v", obs)
	}
	if n := fx.runs.Calls(fx.bin); n != 3 {
		t.Errorf("a dead verdict took %d calls, want 3 (agent get, pane get, pane process-info)", n)
	}
}

func TestAgentStateOfARunningAgentIsAlive(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	wt := t.TempDir()
	ep := fx.create("fm-t1", wt)
	fx.submit(ep, "FOO=1 env -u CLAUDECODE /usr/local/bin/claude --model opus")
	fx.runs.Reset()
	obs := fx.h.AgentState(ctx, ep)
	if obs.State != backends.StateAlive || len(obs.Names) != 1 || obs.Names[0] != "claude" || obs.CurrentPath != wt {
		t.Errorf("agent pane: %+v", obs)
	}
	if n := fx.runs.Calls(fx.bin); n != 2 {
		t.Errorf("an alive verdict took %d calls, want 2 (agent get, pane process-info)", n)
	}
	fx.touch("busy")
	if obs = fx.h.AgentState(ctx, ep); obs.State != backends.StateAlive || !strings.Contains(obs.Detail, "working") {
		t.Errorf("busy agent: %+v", obs)
	}
}

func TestAgentStateAfterTheAgentExitsIsDead(t *testing.T) {
	fx := newHerdrFixture(t)
	ep := fx.create("fm-t1", t.TempDir())
	fx.submit(ep, "claude")
	fx.submit(ep, "/exit")
	if obs := fx.h.AgentState(t.Context(), ep); obs.State != backends.StateDead {
		t.Errorf("after /exit: %+v", obs)
	}
}

func TestAgentStateOfAClosedPaneIsMissing(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	ep := fx.create("fm-t1", t.TempDir())
	if err := fx.h.Kill(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if obs := fx.h.AgentState(ctx, ep); obs.State != backends.StateMissing {
		t.Errorf("closed pane: %+v", obs)
	}
}

func TestAgentStateOfAMalformedTargetIsUnreadable(t *testing.T) {
	fx := newHerdrFixture(t)
	if obs := fx.h.AgentState(t.Context(), backends.Endpoint{Target: "no-colon"}); obs.State != backends.StateUnreadable {
		t.Errorf("malformed target: %+v", obs)
	}
}

func TestAgentStateWithTheServerStoppedIsMissing(t *testing.T) {
	fx := newHerdrFixture(t)
	ep := fx.create("fm-t1", t.TempDir())
	fx.touch("no-server")
	if obs := fx.h.AgentState(t.Context(), ep); obs.State != backends.StateMissing || !strings.Contains(obs.Detail, "no running server") {
		t.Errorf("stopped server: %+v", obs)
	}
}

func TestCurrentPathFollowsCd(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	wt := t.TempDir()
	sub := filepath.Join(wt, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	ep := fx.create("fm-t1", wt)
	if p, err := fx.h.CurrentPath(ctx, ep); err != nil || p != wt {
		t.Errorf("CurrentPath = %q, %v; want %s", p, err, wt)
	}
	fx.submit(ep, "cd sub")
	if p, err := fx.h.CurrentPath(ctx, ep); err != nil || p != sub {
		t.Errorf("after cd: CurrentPath = %q, %v; want %s", p, err, sub)
	}
	if err := fx.h.Kill(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.h.CurrentPath(ctx, ep); err == nil {
		t.Error("CurrentPath of a closed pane succeeded")
	}
}

func TestKillClosesTheTabAndTheEmptiedWorkspace(t *testing.T) {
	ctx := t.Context()
	fx := newHerdrFixture(t)
	a := fx.create("fm-a", t.TempDir())
	b := fx.create("fm-b", t.TempDir())
	if err := fx.h.Kill(ctx, a); err != nil {
		t.Fatal(err)
	}
	ws := fx.state().Sessions["default"].Workspaces
	if len(ws) != 1 || len(ws[0].Tabs) != 1 || ws[0].Tabs[0].Label != "fm-b" {
		t.Fatalf("after killing fm-a: %+v", ws)
	}
	if err := fx.h.Kill(ctx, a); err != nil {
		t.Errorf("killing an already closed pane: %v", err)
	}
	if err := fx.h.Kill(ctx, b); err != nil {
		t.Fatal(err)
	}
	if ws := fx.state().Sessions["default"].Workspaces; len(ws) != 0 {
		t.Errorf("the emptied workspace survived: %+v", ws)
	}
	// The next task brings the workspace back.
	if ep := fx.create("fm-c", t.TempDir()); ep.Field("herdr_workspace_id") != "w2" {
		t.Errorf("recreated workspace: %v", ep.Fields)
	}
}

func TestHerdrValidateRecord(t *testing.T) {
	h := New(nil, Options{})
	good := map[string]string{
		"window": "default:w1:p2", "herdr_session": "default", "herdr_workspace_id": "w1",
		"herdr_tab_id": "w1:t2", "herdr_pane_id": "w1:p2", "endpoint_task_id": "t1",
	}
	ep := func(mod func(map[string]string)) backends.Endpoint {
		f := map[string]string{}
		for k, v := range good {
			f[k] = v
		}
		mod(f)
		return backends.Endpoint{Backend: "herdr", Target: f["window"], TaskID: "t1", Fields: f}
	}
	if err := h.ValidateRecord(ep(func(map[string]string) {})); err != nil {
		t.Fatalf("good record: %v", err)
	}
	bad := map[string]func(map[string]string){
		"no pane id":          func(f map[string]string) { delete(f, "herdr_pane_id") },
		"no tab id":           func(f map[string]string) { delete(f, "herdr_tab_id") },
		"no workspace id":     func(f map[string]string) { f["herdr_workspace_id"] = "" },
		"no session":          func(f map[string]string) { delete(f, "herdr_session") },
		"window of another":   func(f map[string]string) { f["window"] = "default:w1:p3" },
		"session mismatch":    func(f map[string]string) { f["herdr_session"] = "work" },
		"bad session":         func(f map[string]string) { f["herdr_session"], f["window"] = "a b", "a b:w1:p2" },
		"bad pane id":         func(f map[string]string) { f["herdr_pane_id"], f["window"] = "w1:p 2", "default:w1:p 2" },
		"bad tab id":          func(f map[string]string) { f["herdr_tab_id"] = "w1:t2\n" },
		"window without pane": func(f map[string]string) { f["window"], f["herdr_pane_id"] = "default:", "" },
	}
	for name, mod := range bad {
		if err := h.ValidateRecord(ep(mod)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	mismatch := ep(func(map[string]string) {})
	mismatch.Target = "default:w9:p9"
	if err := h.ValidateRecord(mismatch); err == nil {
		t.Error("a record whose window= differs from the endpoint was accepted")
	}
}

func TestSplitHerdrTarget(t *testing.T) {
	s, p, err := SplitTarget("fm-lab.1:w1:p2")
	if err != nil || s != "fm-lab.1" || p != "w1:p2" {
		t.Errorf("SplitTarget = %q %q %v", s, p, err)
	}
	for _, bad := range []string{"", "default", "default:", ":w1:p1", "a b:w1:p1", "default:w1 p1"} {
		if _, _, err := SplitTarget(bad); err == nil {
			t.Errorf("SplitTarget(%q) accepted", bad)
		}
	}
}
