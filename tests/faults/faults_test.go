// Package faults runs the relaunch transaction against every fault and crash
// seam in turn, with the real binaries as subprocesses and a standalone fake
// tmux on PATH. After each, the record is either the prior one byte for byte
// or the one the transaction publishes, the brief is the prior one or the
// prior one plus the progress note, and the journal is settled (directly, or
// by `fm-control recover` after a SIGKILL).
package faults

import (
	"bytes"
	"errors"
	"fmctl/tests/testbin"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

const (
	id   = "t1"
	note = "tests pass; next: the docs"
)

// bin holds the binaries built once for the whole package.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fmctl-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		bin = dir
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func build(dir string) error {
	// The seams this package drives exist only in a fault build.
	return testbin.Build(testbin.Dir(dir), []string{"fmfault"},
		"fmctl/cmd/fm-control", "fmctl/cmd/fm-spawn",
		"fmctl/tests/fakes/tmux/cmd/tmux", "fmctl/tests/fakes/tmux/cmd/faketmux")
}

// world is one case's home, worktree and fake tmux.
type world struct {
	t              *testing.T
	dir, home, wt  string
	meta, brief    string
	journal        string
	priorMeta      []byte
	priorBrief     []byte
	uncommitted    string
	uncommittedRaw []byte
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, dir: dir, home: filepath.Join(dir, "home"), wt: filepath.Join(dir, "wt")}
	for _, d := range []string{"state", "data/" + id, "config"} {
		must(t, os.MkdirAll(filepath.Join(w.home, d), 0o755))
	}
	must(t, os.Mkdir(filepath.Join(dir, "tmp"), 0o755))
	w.meta = filepath.Join(w.home, "state", id+".meta")
	w.brief = filepath.Join(w.home, "data", id, "brief.md")
	w.journal = filepath.Join(w.home, "state", id+".control-relaunch")
	w.run("git", "init", "-q", w.wt)
	w.uncommitted = filepath.Join(w.wt, "work.txt")
	w.uncommittedRaw = []byte("uncommitted work in progress\n")
	must(t, os.WriteFile(w.uncommitted, w.uncommittedRaw, 0o644))
	must(t, os.MkdirAll(filepath.Join(w.wt, ".claude"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.wt, ".claude", "settings.local.json"), []byte("{}\n"), 0o644))
	w.priorMeta = []byte(strings.Join([]string{
		"window=fmses:fm-" + id, "endpoint_task_id=" + id, "worktree=" + w.wt, "project=" + w.wt,
		"harness=claude", "kind=ship", "model=opus", "effort=high", "spawn_gen=s1.1", "pr=https://example.invalid/pr/7",
	}, "\n") + "\n")
	must(t, os.WriteFile(w.meta, w.priorMeta, 0o644))
	w.priorBrief = []byte("BRIEF " + id + "\nDo the thing.\n")
	must(t, os.WriteFile(w.brief, w.priorBrief, 0o644))
	w.run("faketmux", "window", "fmses:fm-"+id, "claude", w.wt)
	return w
}

func (w *world) env(extra ...string) []string {
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + w.dir,
		"FM_HOME=" + w.home,
		"FAKE_TMUX_DIR=" + filepath.Join(w.dir, "tmux"),
		"FM_CONTROL_POLL=0.01",
		"FM_CONTROL_SETTLE_WAIT=0.05",
		"FM_CONTROL_EXIT_WAIT=0.2",
		"FM_CONTROL_LAUNCH_WAIT=0.2",
		"FM_SEND_SLEEP=0.05",
		"FM_SPAWN_WAIT=0.2",
		"FM_SPAWN_PATH_WAIT=0.2",
		"TMUX=",
		"GIT_CONFIG_NOSYSTEM=1",
		// renameio stages a write in the temporary folder when it shares
		// the home's filesystem; a case killed before its rename leaves
		// that file behind, which belongs in the case's own folder.
		"TMPDIR=" + filepath.Join(w.dir, "tmp"),
	}
	return append(env, extra...)
}

// exec runs a command in the case's world and returns its output and error.
func (w *world) exec(extra []string, name string, args ...string) (stdout, stderr string, err error) {
	path := name
	if name != "git" {
		path = filepath.Join(bin, name)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = w.dir
	cmd.Env = w.env(extra...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func (w *world) run(name string, args ...string) string {
	w.t.Helper()
	out, errOut, err := w.exec(nil, name, args...)
	if err != nil {
		w.t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func (w *world) relaunch(env ...string) (string, string, error) {
	return w.exec(env, "fm-control", "relaunch", id, "--harness", "codex", "--note", note)
}

// reportTurnEnd records, as the agent's wiring would, that the current
// incarnation's turn ended.
func (w *world) reportTurnEnd() {
	w.t.Helper()
	data, err := os.ReadFile(w.meta)
	must(w.t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if gen, ok := strings.CutPrefix(line, "spawn_gen="); ok {
			key := "FM_EVENT_KEY=" + eventKey(w.t, filepath.Join(filepath.Dir(w.meta), id+".event-key"))
			if out, errOut, err := w.exec([]string{key}, "fm-control", "agent-event", id, "turn-finished", "--gen", gen); err != nil {
				w.t.Fatalf("fm-control agent-event: %v\n%s%s", err, out, errOut)
			}
		}
	}
}

// eventKey is the incarnation's event key, as the agent's environment holds
// it; a record the test wrote itself (no fm-spawn) gets one written here.
func eventKey(t *testing.T, path string) string {
	t.Helper()
	if data, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(data))
	}
	must(t, os.WriteFile(path, []byte("fixture-key"), 0o600))
	return "fixture-key"
}

// paneCommand reads what the fake pane runs.
func (w *world) paneCommand() string {
	out := w.run("faketmux", "show", "fmses:fm-"+id)
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "command="); ok {
			return v
		}
	}
	return ""
}

var (
	spawnGen = regexp.MustCompile(`^s[0-9]+\.[0-9]+$`)
	txID     = regexp.MustCompile(`^[0-9]+\.[0-9]{8}T[0-9]{6}Z\.[0-9]+$`)
)

// checkMeta asserts the record is the prior one byte for byte, or exactly
// the record the transaction publishes: the prior lines in their order with
// harness=codex, model and effort reset by the switch, a new spawn_gen, and
// control_relaunch_tx appended. It reports which.
func (w *world) checkMeta() (published bool) {
	w.t.Helper()
	got, err := os.ReadFile(w.meta)
	if err != nil {
		w.t.Fatalf("the record is gone: %v", err)
	}
	if bytes.Equal(got, w.priorMeta) {
		return false
	}
	prior := strings.Split(strings.TrimSuffix(string(w.priorMeta), "\n"), "\n")
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	bad := func(why string) {
		w.t.Fatalf("the record is neither the prior one nor the published one (%s)\n--- prior\n%s--- now\n%s", why, w.priorMeta, got)
	}
	if !strings.HasSuffix(string(got), "\n") || len(lines) != len(prior)+1 {
		bad("line count")
	}
	want := map[string]string{"harness": "codex", "model": "default", "effort": "default"}
	for i, p := range prior {
		k, v, _ := strings.Cut(p, "=")
		gk, gv, _ := strings.Cut(lines[i], "=")
		switch {
		case gk != k:
			bad(fmt.Sprintf("line %d is %s, want %s", i+1, gk, k))
		case k == "spawn_gen":
			if !spawnGen.MatchString(gv) || gv == v {
				bad("spawn_gen " + gv)
			}
		case want[k] != "":
			if gv != want[k] {
				bad(fmt.Sprintf("%s=%s, want %s", k, gv, want[k]))
			}
		case gv != v:
			bad(fmt.Sprintf("%s changed to %s", k, gv))
		}
	}
	k, v, _ := strings.Cut(lines[len(lines)-1], "=")
	if k != "control_relaunch_tx" || !txID.MatchString(v) {
		bad("last line " + lines[len(lines)-1])
	}
	return true
}

// checkBrief asserts the brief is the prior one, or the prior one with the
// progress note appended, and reports which.
func (w *world) checkBrief() (noted bool) {
	w.t.Helper()
	got, err := os.ReadFile(w.brief)
	if err != nil {
		w.t.Fatalf("the brief is gone: %v", err)
	}
	if bytes.Equal(got, w.priorBrief) {
		return false
	}
	s := string(got)
	head := strings.TrimRight(string(w.priorBrief), "\n") + "\n\n## Progress note ("
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, "\n\n"+note+"\n") ||
		!strings.Contains(s, ")\n\nThis task was relaunched. Continue from here;") || strings.Count(s, "## Progress note") != 1 {
		w.t.Fatalf("the brief is neither the prior one nor the prior one plus the note:\n%s", got)
	}
	return true
}

// checkJournal asserts a journal, if present, is settled: complete, or
// failed:<phase> with a rollback= line. It returns the phase and rollback.
func (w *world) checkJournal() (phase, rollback string, present bool) {
	w.t.Helper()
	data, err := os.ReadFile(w.journal)
	if errors.Is(err, os.ErrNotExist) {
		return "", "", false
	}
	if err != nil {
		w.t.Fatalf("read the journal: %v", err)
	}
	lines := strings.Split(string(data), "\n")
	if lines[0] != "v1" {
		w.t.Fatalf("the journal is not a v1 journal:\n%s", data)
	}
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "phase="); ok {
			phase = v
		}
		if v, ok := strings.CutPrefix(l, "rollback="); ok {
			rollback = v
		}
	}
	running := map[string]bool{"checkpoint": true, "noted": true, "stopping": true, "exited": true, "launching": true}
	switch {
	case phase == "complete":
		if rollback != "" {
			w.t.Fatalf("a complete journal names a rollback:\n%s", data)
		}
	case strings.HasPrefix(phase, "failed:") && running[strings.TrimPrefix(phase, "failed:")]:
		if rollback == "" {
			w.t.Fatalf("a failed journal names no rollback:\n%s", data)
		}
	default:
		w.t.Fatalf("the journal is left in phase %q, not settled:\n%s", phase, data)
	}
	return phase, rollback, true
}

// checkWork asserts the uncommitted work was never touched.
func (w *world) checkWork() {
	w.t.Helper()
	got, err := os.ReadFile(w.uncommitted)
	if err != nil || !bytes.Equal(got, w.uncommittedRaw) {
		w.t.Fatalf("the uncommitted work changed: %q, %v", got, err)
	}
}

// checkConsistent ties the pieces together: the published record exists
// only with a journal that got that far, and an untouched agent keeps its
// untouched brief.
func (w *world) checkConsistent(published, noted bool, phase, rollback string) {
	w.t.Helper()
	agent := w.paneCommand()
	if published && !(phase == "complete" || rollback == "none-new-record-kept" || rollback == "none-new-agent-confirmed" || rollback == "none-replacement-placed") {
		w.t.Fatalf("the new record was published, but the journal says %s rollback=%s", phase, rollback)
	}
	if !published && (phase == "complete" || strings.HasPrefix(rollback, "none-new")) {
		w.t.Fatalf("the journal says %s rollback=%s, but the record is the prior one", phase, rollback)
	}
	if agent == "claude" && noted {
		w.t.Fatalf("the prior agent still runs, but its brief keeps the relaunch note")
	}
	if (phase == "complete" || rollback == "none-new-agent-confirmed") && agent != "codex" {
		w.t.Fatalf("the journal says the replacement runs, but the pane runs %q", agent)
	}
}

type want struct {
	phase, rollback string // "" phase: no journal
	meta            string // prior or published
	brief           string // prior or noted
	agent           string // what the pane runs afterwards
}

// The fault steps in transaction order, each with the settlement it must
// produce. A failed journal write leaves the journal at the last phase that
// was written.
var faultCases = []struct {
	step string
	want want
}{
	{"git-head", want{"", "", "prior", "prior", "claude"}},
	{"git-status", want{"", "", "prior", "prior", "claude"}},
	{"journal:checkpoint", want{"failed:checkpoint", "instructions-restored", "prior", "prior", "claude"}},
	{"journal:noted", want{"failed:noted", "instructions-restored", "prior", "prior", "claude"}},
	{"journal:stopping", want{"failed:noted", "instructions-restored", "prior", "prior", "claude"}},
	{"exit", want{"failed:stopping", "prior-record-kept-agent-dead", "prior", "noted", "bash"}},
	{"journal:exited", want{"failed:exited", "prior-record-kept", "prior", "noted", "bash"}},
	{"journal:launching", want{"failed:exited", "prior-record-kept", "prior", "noted", "bash"}},
	{"retire:$WT/.claude/settings.local.json", want{"failed:launching", "prior-record-kept", "prior", "noted", "bash"}},
	{"publish", want{"failed:launching", "prior-record-kept", "prior", "noted", "bash"}},
	{"write:" + id + ".meta", want{"failed:launching", "prior-record-kept", "prior", "noted", "bash"}},
	{"launch", want{"failed:launching", "none-new-record-kept", "published", "noted", "bash"}},
	{"journal:complete", want{"failed:launching", "none-new-agent-confirmed", "published", "noted", "codex"}},
}

func TestRelaunchFaults(t *testing.T) {
	for _, tc := range faultCases {
		t.Run(tc.step, func(t *testing.T) {
			w := newWorld(t)
			out, errOut, err := w.relaunch("FM_TEST_FAULT=" + w.step(tc.step))
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("relaunch with FM_TEST_FAULT=%s: %v, want exit 1\n%s%s", tc.step, err, out, errOut)
			}
			if !strings.Contains(errOut, "error: ") || strings.Contains(errOut, "panic") {
				t.Fatalf("stderr is not one error sentence:\n%s", errOut)
			}
			published, noted := w.checkMeta(), w.checkBrief()
			phase, rollback, present := w.checkJournal()
			w.checkWork()
			w.checkConsistent(published, noted, phase, rollback)
			got := want{phase, rollback, pick(published, "published", "prior"), pick(noted, "noted", "prior"), w.paneCommand()}
			if !present {
				got.phase, got.rollback = "", ""
			}
			if got != tc.want {
				t.Fatalf("after FM_TEST_FAULT=%s:\n got %+v\nwant %+v\nstderr: %s", tc.step, got, tc.want, errOut)
			}
			if present && !strings.Contains(errOut, "rollback="+rollback) {
				t.Errorf("the message does not name rollback=%s:\n%s", rollback, errOut)
			}
			if published && !strings.Contains(w.run("fm-control", "status", id), " harness=codex ") {
				t.Errorf("status does not read the published record")
			}
			w.relaunchAgain()
		})
	}
}

// When the failure itself cannot be journaled (its write fails too), the
// journal stays in the running phase it last reached, and recover must come
// to the same settlement the live failure did.
func TestRelaunchFaultsUnjournaled(t *testing.T) {
	for _, tc := range faultCases {
		if tc.want.phase == "" {
			continue
		}
		t.Run(tc.step, func(t *testing.T) {
			w := newWorld(t)
			faults := "FM_TEST_FAULT=" + w.step(tc.step) + ",journal:" + tc.want.phase
			out, errOut, err := w.relaunch(faults)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("relaunch with %s: %v, want exit 1\n%s%s", faults, err, out, errOut)
			}
			if !strings.Contains(errOut, "could not record the failure") {
				t.Fatalf("no warning that the failure went unjournaled:\n%s", errOut)
			}
			w.checkMeta()
			w.checkBrief()
			out, errOut, err = w.exec(nil, "fm-control", "recover", id)
			if err != nil || !recoveredLine.MatchString(out) {
				t.Fatalf("recover: %v\n%s%s", err, out, errOut)
			}
			published, noted := w.checkMeta(), w.checkBrief()
			phase, rollback, _ := w.checkJournal()
			w.checkWork()
			w.checkConsistent(published, noted, phase, rollback)
			got := want{phase, rollback, pick(published, "published", "prior"), pick(noted, "noted", "prior"), w.paneCommand()}
			if strings.HasPrefix(tc.step, "journal:") {
				// The failed write left the journal one phase behind, so
				// recover names that phase (or, for journal:complete, finds
				// the transaction done and completes it); what it may not do
				// is leave the record, brief or agent anywhere else.
				got.phase, got.rollback = tc.want.phase, tc.want.rollback
			}
			if got != tc.want {
				t.Fatalf("recover settled differently from the live failure:\n got %+v\nwant %+v\n%s%s", got, tc.want, out, errOut)
			}
		})
	}
}

// The crash steps: SIGKILL before and after each journal write, between a
// record's temp write and its rename, and at the publication and launch.
var crashSteps = []string{
	"before-rename:" + id + ".control-relaunch.meta-prior",
	"before-rename:" + id + ".control-relaunch",
	"journal:checkpoint", "after:checkpoint",
	"before-rename:" + id + ".control-relaunch.note",
	"before-rename:" + id + ".control-relaunch.brief-prior",
	"before-rename:brief.md",
	"journal:noted", "after:noted",
	"journal:stopping", "after:stopping",
	"journal:exited", "after:exited",
	"journal:launching", "after:launching",
	"retire:$WT/.claude/settings.local.json",
	"publish",
	"before-rename:" + id + ".meta",
	"launch",
	"journal:complete", "after:complete",
}

var recoveredLine = regexp.MustCompile(`(?m)^(recovered ` + id + ` .*outcome=(rolled-back|completed)( |$)|nothing-to-recover ` + id + `( |$)|settled ` + id + ` phase=(complete|failed:[a-z]+)( |$))`)

func TestRelaunchCrashRecovery(t *testing.T) {
	for _, step := range crashSteps {
		t.Run(step, func(t *testing.T) {
			w := newWorld(t)
			out, errOut, err := w.relaunch("FM_TEST_CRASH=" + w.step(step))
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("relaunch with FM_TEST_CRASH=%s did not die: %v\n%s%s", step, err, out, errOut)
			}
			ws, ok := ee.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("relaunch with FM_TEST_CRASH=%s ended with %v, want SIGKILL\n%s%s", step, err, out, errOut)
			}
			// Whatever the crash left, the record and brief are already one
			// of the two allowed states: every write is an atomic replace.
			w.checkMeta()
			w.checkBrief()
			w.refusedWhileTorn()

			out, errOut, err = w.exec(nil, "fm-control", "recover", id)
			if err != nil {
				t.Fatalf("recover after a crash at %s: %v\n%s%s", step, err, out, errOut)
			}
			t.Logf("recover: %s%s", out, errOut)
			if !recoveredLine.MatchString(out) {
				t.Fatalf("recover printed no recovered/nothing-to-recover/settled line:\n%s", out)
			}
			published, noted := w.checkMeta(), w.checkBrief()
			phase, rollback, present := w.checkJournal()
			w.checkWork()
			w.checkConsistent(published, noted, phase, rollback)
			if !present && !strings.HasPrefix(out, "nothing-to-recover") {
				t.Fatalf("recover reported %q but left no journal", out)
			}
			if strings.Contains(out, "outcome=completed") && (phase != "complete" || !published) {
				t.Fatalf("recover says completed, but the journal is %s and published=%v", phase, published)
			}
			if strings.Contains(out, "outcome=rolled-back") && !strings.Contains(out, "rollback="+rollback) {
				t.Fatalf("recover's line does not name the journal's rollback=%s:\n%s", rollback, out)
			}

			// A second recover finds nothing left to do and changes nothing.
			meta, _ := os.ReadFile(w.meta)
			brief, _ := os.ReadFile(w.brief)
			again := w.run("fm-control", "recover", id)
			if !strings.HasPrefix(again, "settled ") && !strings.HasPrefix(again, "nothing-to-recover ") {
				t.Fatalf("a second recover did not find the journal settled:\n%s", again)
			}
			meta2, _ := os.ReadFile(w.meta)
			brief2, _ := os.ReadFile(w.brief)
			if !bytes.Equal(meta, meta2) || !bytes.Equal(brief, brief2) {
				t.Fatalf("a second recover changed the record or the brief")
			}
			w.relaunchAgain()
		})
	}
}

// refusedWhileTorn asserts that a journal left in a running phase blocks
// the next relaunch, byte for byte, until recover settles it: otherwise that
// relaunch would replace the prior brief the rollback restores.
func (w *world) refusedWhileTorn() {
	w.t.Helper()
	data, err := os.ReadFile(w.journal)
	if err != nil || bytes.Contains(data, []byte("\nphase=complete\n")) || bytes.Contains(data, []byte("\nphase=failed:")) {
		return
	}
	meta, _ := os.ReadFile(w.meta)
	brief, _ := os.ReadFile(w.brief)
	out, errOut, err := w.relaunch()
	if err == nil || !strings.Contains(errOut, "fm-control recover "+id) {
		w.t.Fatalf("a relaunch over a torn journal was not refused: %v\n%s%s", err, out, errOut)
	}
	meta2, _ := os.ReadFile(w.meta)
	brief2, _ := os.ReadFile(w.brief)
	data2, _ := os.ReadFile(w.journal)
	if !bytes.Equal(meta, meta2) || !bytes.Equal(brief, brief2) || !bytes.Equal(data, data2) {
		w.t.Fatalf("a refused relaunch over a torn journal changed the record, brief or journal")
	}
}

// step expands a seam name that depends on the case's paths.
func (w *world) step(s string) string {
	return strings.ReplaceAll(s, "$WT", w.wt)
}

// relaunchAgain proves the settled task is usable: a relaunch without any
// fault completes, whatever agent (or none) the settlement left running.
func (w *world) relaunchAgain() {
	w.t.Helper()
	// The fake codex does not report its own events: stand in for its
	// Stop hook, or the stop could not prove that /quit leaves no turn.
	w.reportTurnEnd()
	out, errOut, err := w.relaunch()
	if err != nil {
		w.t.Fatalf("a relaunch after the settlement failed: %v\n%s%s", err, out, errOut)
	}
	if phase, _, _ := w.checkJournal(); phase != "complete" || w.paneCommand() != "codex" || !w.checkMeta() {
		w.t.Fatalf("a relaunch after the settlement left phase %q and pane %q", phase, w.paneCommand())
	}
	w.checkWork()
}

func pick(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
