// Package spawn is fm-spawn: it launches a harness for a task into a backend
// endpoint and worktree, or (--relaunch) adopts a task's recorded endpoint and
// worktree for a replacement agent.
package spawn

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/deliver"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/harness/wiring"
	"fmctl/state"
)

// Spawner runs fm-spawn requests.
type Spawner struct {
	Env    config.Env
	Runner backends.Runner
	Print  cli.Printer
	// LaunchWait bounds the wait for the new agent to come up; zero reads
	// FM_SPAWN_WAIT.
	LaunchWait time.Duration
	// InputHeld: the caller already holds the task's input lock (fm-control
	// relaunch takes it before stopping the old agent). The lock is an
	// flock, which one process must not take twice, so ownership is passed
	// explicitly rather than taken again here.
	InputHeld bool
}

// lockInput takes the task's input lock for a launch line, unless the
// caller passed it in; release is always safe to call.
func (s Spawner) lockInput(store state.Store, id string) (release func(), err error) {
	if s.InputHeld {
		return func() {}, nil
	}
	l, err := store.LockInput(id, config.Duration(s.Env, "FM_SEND_LOCK_WAIT", 60*time.Second))
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

func (s Spawner) launchWait() time.Duration {
	if s.LaunchWait > 0 {
		return s.LaunchWait
	}
	return config.Duration(s.Env, "FM_SPAWN_WAIT", 30*time.Second)
}

func (s Spawner) poll() time.Duration {
	return config.Duration(s.Env, "FM_CONTROL_POLL", 100*time.Millisecond)
}

// Result is what a launch achieved.
type Result struct {
	Outcome cli.Outcome
	Ready   string // confirmed, starting, or blocked (Dialog names the dialog)
	Dialog  string
	Record  state.Record
}

// waitPath polls the endpoint's current directory until it is want.
func (s Spawner) waitPath(ctx context.Context, be backends.Backend, ep backends.Endpoint, want string, limit time.Duration) (string, bool) {
	deadline := time.Now().Add(limit)
	last := ""
	for {
		if p, err := be.CurrentPath(ctx, ep); err == nil {
			last = p
			if backends.SameDirKey(p) == backends.SameDirKey(want) {
				return p, true
			}
		}
		if time.Now().After(deadline) {
			return last, false
		}
		if backends.Sleep(ctx, s.poll()) != nil {
			return last, false
		}
	}
}

// readiness is what the launch wait saw: confirmed, starting, or blocked at
// a named dialog.
type readiness struct{ Ready, Dialog string }

// addDialog names the blocking dialog, after ready=blocked.
func (r readiness) addDialog(o *cli.Outcome) {
	if r.Dialog != "" {
		o.Add("dialog", r.Dialog)
	}
}

// typeLaunch types the launch line into the endpoint's shell and waits,
// bounded, for the classifier to see the agent and then, where the harness
// has verified screen signatures, for its screen to show it ready. A harness
// that takes its prompt through the composer gets it once it is up.
func (s Spawner) typeLaunch(ctx context.Context, be backends.Backend, ability harness.Backend, ep backends.Endpoint, h harness.Harness, line, brief string) (readiness, error) {
	starting := readiness{Ready: "starting"}
	if err := state.Fault("launch"); err != nil {
		return readiness{}, err
	}
	if sl, ok := be.(backends.ShellLiner); ok {
		if err := s.typeClean(ctx, be, sl, ep, line); err != nil {
			return readiness{}, err
		}
	} else if err := be.SendText(ctx, ep, line); err != nil {
		return readiness{}, fmt.Errorf("type the launch command into %s: %w", ep.Target, err)
	}
	if err := be.SendKey(ctx, ep, harness.KeyEnter); err != nil {
		return readiness{}, fmt.Errorf("submit the launch command in %s: %w", ep.Target, err)
	}
	if !ability.Classifier {
		return starting, nil
	}
	deadline := time.Now().Add(s.launchWait())
	stopWaiting := s.Print.Waiting(fmt.Sprintf("waiting for %s to come up at %s", h.Name, ep.Target), deadline)
	defer stopWaiting()
	for {
		obs := be.AgentState(ctx, ep)
		if obs.State == backends.StateAlive {
			break
		}
		if obs.State == backends.StateMissing {
			return readiness{}, fmt.Errorf("the endpoint %s disappeared while the agent was starting", ep.Target)
		}
		if time.Now().After(deadline) {
			// Only a shell still waiting for the agent is "starting"; any
			// other process there is not the agent that was launched, and
			// calling it a replacement in progress would hide that.
			if obs.State != backends.StateDead {
				return readiness{}, fmt.Errorf("the agent is not at the endpoint it was launched at: %s reads '%s' (%s) after %s", ep.Target, obs.State, obs.Detail, s.launchWait())
			}
			return starting, nil
		}
		if backends.Sleep(ctx, s.poll()) != nil {
			return starting, nil
		}
	}
	if ready := s.waitScreen(ctx, be, ep, h, deadline); ready.Ready != "confirmed" {
		return ready, nil
	}
	if h.Launch.PromptVia == harness.PromptComposer {
		res := deliver.Submit(ctx, be, ep, harness.BriefPrompt(brief), deliver.DefaultOptions())
		if res.Verdict != deliver.Submitted {
			return readiness{}, fmt.Errorf("%s started, but its brief prompt was not confirmed submitted (verdict=%s)", h.Name, res.Verdict)
		}
	}
	return readiness{Ready: "confirmed"}, nil
}

// waitScreen waits, until deadline, for a harness with verified screen
// signatures to show itself ready: its composer drawn, no blocking dialog,
// no not-ready mark, and where the harness draws its composer early (codex,
// gemini), its launch prompt's turn seen. A process alive is not enough:
// real CLIs run for seconds before they draw a composer. A dialog is
// reported at once, with nothing typed into it.
func (s Spawner) waitScreen(ctx context.Context, be backends.Backend, ep backends.Endpoint, h harness.Harness, deadline time.Time) readiness {
	sig, ok := h.Screen()
	if !ok {
		return readiness{Ready: "confirmed"}
	}
	for {
		if scr, err := be.Capture(ctx, ep); err == nil {
			st := sig.ReadScreen(scr.Lines)
			if st.Dialog != "" {
				return readiness{Ready: "blocked", Dialog: st.Dialog}
			}
			if st.Launched(sig) {
				return readiness{Ready: "confirmed"}
			}
		}
		if time.Now().After(deadline) || backends.Sleep(ctx, s.poll()) != nil {
			return readiness{Ready: "starting"}
		}
	}
}

// typeClean empties the shell's input line, types the launch line, and
// proves the input line then reads the prompt followed by exactly the
// launch line, so leftover or late text is never glued to it. On any
// doubt it clears the line again and refuses before Enter.
func (s Spawner) typeClean(ctx context.Context, be backends.Backend, sl backends.ShellLiner, ep backends.Endpoint, line string) error {
	before, err := sl.ShellRows(ctx, ep)
	if err != nil {
		return fmt.Errorf("read the shell line of %s: %w", ep.Target, err)
	}
	if err := sl.ClearShellLine(ctx, ep); err != nil {
		return err
	}
	if err := be.SendText(ctx, ep, line); err != nil {
		return fmt.Errorf("type the launch command into %s: %w", ep.Target, err)
	}
	deadline := time.Now().Add(s.pathWait())
	for {
		rows, err := sl.ShellRows(ctx, ep)
		got, span := inputLine(rows, line)
		if err == nil && span > 0 {
			// What precedes the launch line must be the prompt the
			// line began with (or anything, in a shell that had drawn
			// nothing yet).
			prompt := strings.TrimRight(strings.TrimSuffix(got, line), " ")
			if len(before) > 0 && !beganWith(before, prompt, span) {
				_ = sl.ClearShellLine(ctx, ep)
				return fmt.Errorf("the shell line in %s reads %q: %q came before the launch line, not the prompt it began with; cleared it, nothing was launched", ep.Target, got, prompt)
			}
			return nil
		}
		if time.Now().After(deadline) || backends.Sleep(ctx, s.poll()) != nil {
			_ = sl.ClearShellLine(ctx, ep)
			return fmt.Errorf("the shell line in %s reads %q, not the launch line; cleared it, nothing was launched", ep.Target, got)
		}
	}
}

// maxInputRows bounds how many screen rows an input line may span.
const maxInputRows = 40

// inputLine finds the input line ending in line among the bottom rows,
// joining as many as it spans, and returns it with that count; otherwise
// it returns the last row and 0.
func inputLine(rows []string, line string) (string, int) {
	for n := 1; n <= len(rows) && n <= maxInputRows; n++ {
		if joined := strings.Join(rows[len(rows)-n:], ""); strings.HasSuffix(joined, line) {
			return joined, n
		}
	}
	if len(rows) == 0 {
		return "", 0
	}
	return rows[len(rows)-1], 0
}

// beganWith reports whether the input line before the clear (its bottom
// rows, joined, spanning at most span rows) started with prompt.
func beganWith(rows []string, prompt string, span int) bool {
	for n := 1; n <= len(rows) && n <= span; n++ {
		if strings.HasPrefix(strings.Join(rows[len(rows)-n:], ""), prompt) {
			return true
		}
	}
	return false
}

// newSpawnGen names one incarnation of a task's agent.
func newSpawnGen() string {
	return "s" + strconv.FormatInt(time.Now().Unix(), 10) + "." + strconv.Itoa(os.Getpid())
}

// loadConfig reads config/fm.toml, as a refusal when it is malformed.
func loadConfig(home config.Home) (config.File, error) {
	f, err := home.LoadFile()
	if err != nil {
		return config.File{}, cli.Failed("%w", err)
	}
	return f, nil
}

// launchParams applies config/fm.toml's per-harness overrides.
func launchParams(f config.File, h harness.Harness, model, effort, worktree, brief string, w wired) harness.LaunchParams {
	p := harness.LaunchParams{Model: model, Effort: effort, Worktree: worktree, Brief: brief, TelemetryArgs: w.args}
	if o, ok := f.Harness[h.Name]; ok {
		p.Binary, p.ExtraArgs = o.Binary, o.Args
	}
	return p
}

func orDefault(v string) string {
	if v == "" {
		return "default"
	}
	return v
}

// wired is one incarnation's telemetry: the entry-point call its wiring
// makes and the launch-line additions that carry it.
type wired struct {
	target harness.WiringTarget
	task   wiring.Task
	args   []string
}

// prepareWiring names the generation this incarnation runs under and what
// its wiring will call; nothing is written yet. Without an fm-control to
// call, the agent runs unwired: its activity then reads unknown, which every
// reader already treats as "not proven idle".
func (s Spawner) prepareWiring(home config.Home, h harness.Harness, id, wt, gen string) wired {
	w := wired{task: wiring.Task{Worktree: wt, StateDir: home.State, ID: id}}
	if _, ok := h.Telemetry(); !ok {
		return w
	}
	fmc, err := wiring.FMControl()
	if err != nil {
		s.Print.Notice("telemetry=none for %s: %v", id, err)
		return w
	}
	w.target = harness.WiringTarget{FMControl: fmc, Home: home.Root, ID: id, Gen: gen}
	if home.State != filepath.Join(home.Root, "state") {
		w.target.StateDir = home.State
	}
	w.args = h.TelemetryArgs(w.target, home.State)
	return w
}

// install writes the incarnation's telemetry files.
func (w wired) install(h harness.Harness) error {
	if w.target.FMControl == "" {
		return nil
	}
	if err := wiring.Install(h, w.task, w.target); err != nil {
		return cli.Failed("could not wire %s's telemetry: %v", h.Name, err)
	}
	return nil
}
