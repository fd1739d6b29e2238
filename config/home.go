// Package config resolves the home (FM_HOME and its directories), reads the
// secondmate harness pin, the optional TOML config and the tunable waits.
// Nothing here runs unless a verb asks for it, so start-up stays cheap.
package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"fmctl/state"
)

// Env reads environment variables; tests pass a map, binaries os.Getenv.
type Env func(string) string

// Home is a firstmate home and the directories inside it.
type Home struct {
	Root   string
	State  string
	Data   string
	Config string
}

// ResolveHome finds the home named by FM_HOME. It never falls back to a
// guess: an unset FM_HOME or one that is not a directory is refused.
func ResolveHome(tool string, env Env) (Home, error) {
	root := env("FM_HOME")
	if root == "" {
		return Home{}, state.Errorf(ErrNoHome, "FM_HOME is not set; %s refuses to resolve a task without an explicit firstmate home (export FM_HOME=/path/to/home)", tool)
	}
	if info, err := os.Stat(root); err != nil || !info.IsDir() {
		return Home{}, state.Errorf(ErrNoHome, "FM_HOME '%s' is not a directory; point it at a firstmate home", root)
	}
	// Paths built from the home reach agents in other directories (the
	// brief pointer in a launch line), so a relative FM_HOME is made
	// absolute here, once, for every binary.
	abs, err := filepath.Abs(root)
	if err != nil {
		return Home{}, state.Errorf(ErrNoHome, "FM_HOME '%s' cannot be made absolute: %w", root, err)
	}
	root = abs
	h := Home{
		Root:   root,
		State:  orDefault(env("FM_STATE_OVERRIDE"), filepath.Join(root, "state")),
		Data:   orDefault(env("FM_DATA_OVERRIDE"), filepath.Join(root, "data")),
		Config: orDefault(env("FM_CONFIG_OVERRIDE"), filepath.Join(root, "config")),
	}
	if info, err := os.Stat(h.State); err != nil || !info.IsDir() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Home{}, state.Errorf(ErrNoHome, "state dir '%s' cannot be read: %w", h.State, err)
		}
		return Home{}, state.Errorf(ErrNoHome, "state dir '%s' is missing; %s cannot resolve tasks for FM_HOME '%s'", h.State, tool, root)
	}
	return h, nil
}

// orDefault returns v made absolute, or def (already absolute).
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	if abs, err := filepath.Abs(v); err == nil {
		return abs
	}
	return v
}

// BriefPath is where a ship or scout's instructions live.
func (h Home) BriefPath(id string) string { return filepath.Join(h.Data, id, "brief.md") }

// ErrNoHome marks a firstmate home that is not set up; the CLI maps it to
// its stable error code.
var ErrNoHome = errors.New("no usable firstmate home")
