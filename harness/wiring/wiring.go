// Package wiring installs and retires the per-task files through which an
// agent reports its own lifecycle events (harness.Telemetry) to
// `fm-control agent-event`. Every write stays inside the task's worktree or
// the state dir and never goes through a symlink.
package wiring

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"fmctl/harness"
	"fmctl/state"
)

// Task is where one task's wiring lives.
type Task struct {
	Worktree string
	StateDir string
	ID       string
}

// root is the directory a wiring path must stay under.
func (t Task) root(p string) string {
	if strings.HasPrefix(p, t.Worktree+"/") {
		return t.Worktree
	}
	return t.StateDir
}

// FMControl finds the fm-control the wiring will call: the running binary
// when it is fm-control (a relaunch), its sibling (fm-spawn installed
// beside it), or the one on PATH.
func FMControl() (string, error) {
	if self, err := os.Executable(); err == nil {
		if filepath.Base(self) == "fm-control" {
			return self, nil
		}
		sib := filepath.Join(filepath.Dir(self), "fm-control")
		if info, err := os.Stat(sib); err == nil && info.Mode().IsRegular() {
			return sib, nil
		}
	}
	p, err := exec.LookPath("fm-control")
	if err != nil {
		return "", fmt.Errorf("fm-control is neither beside this binary nor on PATH, so the agent's telemetry cannot be wired: %w", err)
	}
	return filepath.Abs(p)
}

// Install writes h's telemetry file for this incarnation (gen), replacing an
// older incarnation's, clears an agent-state file a stale incarnation left
// and makes the events directory a bash-run hook reports into, empty. A
// harness without a telemetry file (codex: the launch line carries it)
// writes no file.
func Install(h harness.Harness, t Task, w harness.WiringTarget) error {
	store := state.Store{Dir: t.StateDir}
	_ = state.RemoveIfExists(store.AgentStatePath(t.ID))
	if w.EventsDir != "" {
		if err := store.ResetAgentEvents(t.ID); err != nil {
			return err
		}
	}
	return install(h, t, w, false)
}

// CheckInstall makes Install's refusals (a symlinked component, settings
// fmctl cannot merge into) and writes nothing, so a relaunch refuses before
// it stops the agent.
func CheckInstall(h harness.Harness, t Task, w harness.WiringTarget) error {
	return install(h, t, w, true)
}

func install(h harness.Harness, t Task, w harness.WiringTarget, dry bool) error {
	tel, ok := h.Telemetry()
	if !ok || tel.File == "" {
		return nil
	}
	p := harness.ExpandWiring(tel.File, t.Worktree, t.StateDir, t.ID)
	if p == "" {
		return nil
	}
	if err := state.NoSymlinkUnder(t.root(p), p); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	var data []byte
	switch tel.Mechanism {
	case harness.MechClaudeHooks, harness.MechGeminiHooks, harness.MechQwenHooks:
		existing, err := state.ReadSmallFile(p, state.MaxRecordBytes)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s cannot be read to add fmctl's hooks: %w", p, err)
		}
		if data, err = harness.MergeHookSettings(existing, tel, w); err != nil {
			return fmt.Errorf("%s %w", p, err)
		}
	case harness.MechOpencodePlugin:
		data = harness.RenderOpencodePlugin(tel, w)
	case harness.MechPiExtension:
		data = harness.RenderPiExtension(tel, w)
	case harness.MechCopilotHooks:
		data = harness.RenderCopilotHooks(tel, w)
	default:
		return nil
	}
	if dry {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
	}
	if err := state.WriteAtomic(p, data); err != nil {
		return err
	}
	return nil
}

// Retire removes h's per-task wiring files. A merged settings file loses
// only fmctl's entries, and is deleted only when nothing else is left.
// Nothing is deleted through a symlinked component.
func Retire(h harness.Harness, t Task) error { return retire(h, t, false) }

// CheckRetire makes Retire's refusals (a symlinked or non-directory
// component, a merged settings file fmctl cannot rewrite) and changes
// nothing, so a relaunch refuses before it stops the agent whose wiring
// it would find it cannot retire.
func CheckRetire(h harness.Harness, t Task) error { return retire(h, t, true) }

func retire(h harness.Harness, t Task, dry bool) error {
	tel, hasTel := h.Telemetry()
	merged := ""
	if hasTel && tel.MergesSettings() {
		merged = harness.ExpandWiring(tel.File, t.Worktree, t.StateDir, t.ID)
	}
	for _, p := range h.WiringPaths(t.Worktree, t.StateDir, t.ID) {
		if err := state.NoSymlinkUnder(t.root(p), p); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := state.Inject("retire:" + p); err != nil && !dry {
			return fmt.Errorf("%s: %w", p, err)
		}
		if p == merged {
			if err := unmerge(p, dry); err != nil {
				return err
			}
			continue
		}
		if dry {
			continue
		}
		if err := state.RemoveIfExists(p); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

func unmerge(p string, dry bool) error {
	existing, err := state.ReadSmallFile(p, state.MaxRecordBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s cannot be read to remove fmctl's hooks: %w", p, err)
	}
	doc, err := harness.UnmergeHookSettings(existing)
	if err != nil {
		return fmt.Errorf("%s %w", p, err)
	}
	data, empty, err := harness.HookSettingsBytes(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if dry {
		return nil
	}
	if empty {
		return state.RemoveIfExists(p)
	}
	return state.WriteAtomic(p, data)
}
