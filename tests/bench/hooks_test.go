package bench

import (
	"flag"
	"fmctl/harness"
	"fmctl/state"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

var idleFor = flag.Duration("bench.idle", 60*time.Second, "how long each waiting verb is watched for its CPU use")

// hookID is the task the hooks report for: a record of its own, so the
// events the rows write never change what t1's rows read.
const hookID = "t9"

// BenchmarkHooks times what each wired hook holds its agent for: the exact
// command the harness runs (claude and codex run theirs through sh -c
// with exec, gemini, qwen and copilot through bash -c with the output and
// status swallowed; codex's notify program, opencode's plugin and pi's
// extension start it in exec form), against a bare `fm-control --version`
// start. The two alternate run by run, so a load that comes and goes
// weighs on each alike, and each row's ratio is to its own --version
// runs. Every run must record its event (exit 0, the agent-state file
// names it), or the row says so.
func BenchmarkHooks(b *testing.B) {
	key, err := hookRecord()
	if err != nil {
		b.Fatal(err)
	}
	// t9's pane is this process, so every verb the later benchmarks run
	// from here would be t9's, not the operator's: the record goes with
	// this benchmark.
	store := state.Store{Dir: filepath.Join(home, "state")}
	defer func() {
		for _, suffix := range []string{".meta", ".event-key", ".agent-state", ".events"} {
			os.RemoveAll(filepath.Join(home, "state", hookID+suffix))
		}
	}()
	if err := store.ResetAgentEvents(hookID); err != nil {
		b.Fatal(err)
	}
	w := harness.WiringTarget{FMControl: filepath.Join(binDir, "fm-control"), Home: home, ID: hookID, Gen: benchGen, EventsDir: store.AgentEventsDir(hookID)}
	rows := []string{
		"| harness | native event | form | median | p95 | `fm-control --version` median | ratio | ratio less the runner's shell | recorded |",
		"|---|---|---|---|---|---|---|---|---|",
	}
	version := func() error { return exec.Command(w.FMControl, "--version").Run() }
	b.ResetTimer()
	// The runner's shell alone (`<shell> -c 'exit 0'`), the part of a
	// shell-run hook the harness pays for any hook at all.
	shellAlone := map[string]time.Duration{}
	for _, sh := range []string{"sh", "bash"} {
		runs, base := timeAlternating(*iters, func() error { return exec.Command(sh, "-c", "exit 0").Run() }, version)
		shellAlone[sh] = median(runs)
		rows = append(rows, fmt.Sprintf("| unit: the runner's shell | | `%s -c 'exit 0'` | %s ms | %s ms | %s ms | %.2f× | | |", sh,
			ms(median(runs)), ms(p95(runs)), ms(median(base)), float64(median(runs))/float64(median(base))))
	}
	for _, h := range harness.Harnesses() {
		t, ok := h.Telemetry()
		if !ok {
			continue
		}
		for _, e := range t.Events {
			for _, f := range hookForms(t, e, t.Hook(w, e.Event)) {
				recorded := 0
				runs, base := timeAlternating(*iters, func() error {
					cmd := exec.Command(f.argv[0], f.argv[1:]...)
					cmd.Env = append(os.Environ(), harness.EventKeyEnv+"="+key)
					if out, err := cmd.CombinedOutput(); err != nil {
						return fmt.Errorf("%v: %s", err, out)
					}
					if a, ok := store.ReadAgentState(hookID, benchGen); ok && a.Event == e.Event {
						recorded++
					}
					return nil
				}, version)
				less := ""
				if sh := f.argv[0]; f.form != "exec" {
					less = fmt.Sprintf("%.2f×", float64(median(runs)-shellAlone[sh])/float64(median(base)))
				}
				rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s ms | %s ms | %s ms | %.2f× | %s | %d/%d |", h.Name, e.Native, f.form,
					ms(median(runs)), ms(p95(runs)), ms(median(base)), float64(median(runs))/float64(median(base)), less, recorded, len(runs)))
			}
		}
	}
	b.StopTimer()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("\nhooks, load average %s\n%s\n", strings.TrimSpace(string(load)), strings.Join(rows, "\n"))
}

// hookRun is one way a harness runs a hook: the form's label and argv.
type hookRun struct {
	form string
	argv []string
}

// hookForms are the command lines the harness's mechanism runs for hook,
// under the shell its hook runner starts (harness.Telemetry.HookShell).
// /bin/sh is dash here and bash where a system makes it so: both are
// timed, as the hook reports without fm-control only under bash. (codex's
// notify is a program, its other hooks shell commands.)
func hookForms(t harness.Telemetry, e harness.EventMap, hook harness.Hook) []hookRun {
	switch {
	case e.Native == "notify":
	case t.HookShell() == "bash":
		return []hookRun{{"bash -c, quiet", []string{"bash", "-c", hook.QuietShell()}}}
	case t.HookShell() == "sh":
		return []hookRun{{"sh -c (dash)", []string{"sh", "-c", hook.Shell}}, {"sh -c (bash)", []string{"bash", "-c", hook.Shell}}}
	}
	return []hookRun{{"exec", hook.Argv}}
}

// hookRecord writes t9's record (t1's, under its own id) and its event key,
// and returns the key. Its pane pid is this process's, so each hook runs
// inside its task's pane as an agent's does: agent-event finds its caller
// from that record alone (authority.Resolver.ResolveAs).
func hookRecord() (string, error) {
	meta := fmt.Sprintf("window=fmses:fm-%s\nendpoint_task_id=%s\nharness=claude\nkind=ship\nmodel=default\neffort=default\nspawn_gen=%s\ntmux_pane_pid=%d\n", hookID, hookID, benchGen, os.Getpid())
	if err := os.WriteFile(filepath.Join(home, "state", hookID+".meta"), []byte(meta), 0o644); err != nil {
		return "", err
	}
	key, err := state.NewEventKey()
	if err != nil {
		return "", err
	}
	return key, state.Store{Dir: filepath.Join(home, "state")}.WriteEventKey(hookID, key)
}

// timeAlternating runs f and base n times each, one after the other, and
// returns each one's wall times; a failed run is fatal to the row's
// meaning, so it ends the whole benchmark.
func timeAlternating(n int, f, base func() error) (fs, bases []time.Duration) {
	timed := func(g func() error) time.Duration {
		start := time.Now()
		if err := g(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return time.Since(start)
	}
	for range n {
		fs = append(fs, timed(f))
		bases = append(bases, timed(base))
	}
	return fs, bases
}

func p95(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)*95+99)/100-1]
}

// BenchmarkIdle measures what a caller waiting on an idle task costs the
// machine: `wait` for a dialog that never comes, `read --follow` and
// `list --watch` on a pane that never changes, each watched for
// -bench.idle, as CPU time (user + system, from the kernel's accounting of
// the process) over wall time.
func BenchmarkIdle(b *testing.B) {
	claude.fresh(b)
	rows := []string{
		"| verb, on an idle task | watched | CPU time | share of one core |",
		"|---|---|---|---|",
	}
	secs := fmt.Sprintf("%ds", int(idleFor.Seconds()))
	verbs := []struct {
		label string
		args  []string
		stop  bool // runs until interrupted, so it is sent SIGINT at the end
	}{
		{"`fm-control wait t1 --for waiting`", []string{"wait", "t1", "--for", "waiting", "--timeout", secs}, false},
		{"`fm-control read t1 --follow`", []string{"read", "t1", "--follow"}, true},
		{"`fm-control list --watch`", []string{"list", "--watch"}, true},
	}
	b.ResetTimer()
	for _, v := range verbs {
		cmd := exec.Command(filepath.Join(binDir, "fm-control"), v.args...)
		cmd.Env = env("")
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if v.stop {
			time.Sleep(*idleFor)
			_ = cmd.Process.Signal(syscall.SIGINT)
		}
		_ = cmd.Wait()
		wall := time.Since(start)
		ps := cmd.ProcessState
		cpu := ps.UserTime() + ps.SystemTime()
		rows = append(rows, fmt.Sprintf("| %s | %.0f s | %s ms | %.2f%% |", v.label, wall.Seconds(), ms(cpu), 100*float64(cpu)/float64(wall)))
	}
	// The unit: what one look at the task costs, as one status call.
	var cpu time.Duration
	const looks = 20
	for range looks {
		cmd := exec.Command(filepath.Join(binDir, "fm-control"), "status", "t1")
		cmd.Env = env("")
		_ = cmd.Run()
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	rows = append(rows, fmt.Sprintf("| (unit) one `fm-control status t1` | | %s ms | |", ms(cpu/looks)))
	b.StopTimer()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("\nidle callers, load average %s\n%s\n", strings.TrimSpace(string(load)), strings.Join(rows, "\n"))
}
