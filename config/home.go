// Package config owns every FM_* variable (the table in tunables.go, read
// once into Tunables), resolves the home (FM_HOME and its directories), and
// reads the secondmate harness pin and the optional TOML config.
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
// FM_* variables are read once, into Tunables (ReadTunables); Env is for
// the context the binaries are run in (TMUX, HERDR_ENV, NO_COLOR, ...).
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
func ResolveHome(tool string, v HomeVars) (Home, error) {
	h, err := LocateHome(tool, v)
	if err != nil {
		return Home{}, err
	}
	return h, h.checkState(tool, v)
}

// LocateHome is ResolveHome without requiring the state dir: fm-spawn reads
// a new home's config and checks its whole command line before SetUp makes
// anything, so a refused spawn leaves the home as it found it.
func LocateHome(tool string, v HomeVars) (Home, error) {
	root := v.Root
	if root == "" {
		return Home{}, state.WithHints(state.Errorf(ErrNoHome, "FM_HOME is not set; %s resolves a task only in an explicit firstmate home", tool),
			"export FM_HOME=/path/to/home (an existing directory)", "then start a task: "+FirstSpawn)
	}
	if info, err := os.Stat(root); err != nil || !info.IsDir() {
		return Home{}, notAHome(root, info, err)
	}
	// Paths built from the home reach agents in other directories (the
	// brief pointer in a launch line), so a relative FM_HOME is made
	// absolute here, once, for every binary.
	abs, err := filepath.Abs(root)
	if err != nil {
		return Home{}, state.Errorf(ErrNoHome, "FM_HOME '%s' cannot be made absolute: %w", root, err)
	}
	root = abs
	return Home{
		Root:   root,
		State:  orDefault(v.StateOverride, filepath.Join(root, "state")),
		Data:   orDefault(v.DataOverride, filepath.Join(root, "data")),
		Config: orDefault(v.ConfigOverride, filepath.Join(root, "config")),
	}, nil
}

// notAHome refuses an FM_HOME that is no directory, with hints that work
// as printed: mkdir -p for a path that does not exist, never for one a
// file holds (it would fail), where the directory the file is in is named
// instead when it is a home (FM_HOME pointed at a file inside one).
func notAHome(root string, info fs.FileInfo, err error) error {
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return state.WithHints(state.Errorf(ErrNoHome, "FM_HOME '%s' is not a directory fmctl can read: %w", root, err),
			"point FM_HOME at your firstmate home, a directory you can read")
	case err != nil:
		return state.WithHints(state.Errorf(ErrNoHome, "FM_HOME '%s' is not a directory", root),
			"point FM_HOME at your firstmate home", "or make a new one: mkdir -p '"+root+"', then "+FirstSpawn)
	}
	e := state.Errorf(ErrNoHome, "FM_HOME '%s' is not a directory but a %s", root, fileKind(info))
	if parent := filepath.Dir(root); isDir(filepath.Join(parent, "state")) {
		return state.WithHints(e, "FM_HOME names the home's directory itself: export FM_HOME='"+parent+"'")
	}
	return state.WithHints(e, "point FM_HOME at your firstmate home, a directory",
		`or make a new one in a directory of its own: mkdir -p "$HOME/fm-home" && export FM_HOME="$HOME/fm-home", then `+FirstSpawn)
}

func fileKind(info fs.FileInfo) string {
	if info.Mode().IsRegular() {
		return "file"
	}
	return "special file"
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// checkState refuses a home without its state dir, naming the next step.
func (h Home) checkState(tool string, v HomeVars) error {
	root := h.Root
	if info, err := os.Stat(h.State); err != nil || !info.IsDir() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return state.Errorf(ErrNoHome, "state dir '%s' cannot be read: %w", h.State, err)
		}
		missing := state.Errorf(ErrNoHome, "state dir '%s' is missing; %s cannot resolve tasks for FM_HOME '%s'", h.State, tool, root)
		if v.StateOverride != "" {
			return state.WithHints(missing, "FM_STATE_OVERRIDE names it: create it or unset FM_STATE_OVERRIDE")
		}
		return state.WithHints(missing, "no task was ever spawned there; start the first task: "+FirstSpawn)
	}
	return nil
}

// FirstSpawn is the command that sets a new home up, for the first-run
// errors to name as the next step.
const FirstSpawn = "fm-spawn <id> " + state.SpawnFlags

// SetUp is what fm-spawn, the one binary that starts a home, does once its
// command line has been checked: inside the existing FM_HOME it creates the
// state/, data/ and config/ a new home lacks. FM_HOME itself is never
// created (LocateHome refuses it), since a mistyped path would silently
// become a second, empty home; a directory an override names is the
// caller's to make. As everywhere in the records layer, the home's root is
// trusted as given but nothing below it is reached through a symlink: a
// linked state/ would put every record, journal and lock somewhere fmctl
// never chose.
func (h Home) SetUp(tool string, v HomeVars) error {
	var names []string
	for _, dir := range []string{h.State, h.Data, h.Config} {
		if filepath.Dir(dir) == h.Root { // not an override's directory
			names = append(names, filepath.Base(dir))
		}
	}
	if err := makeHomeDirs(h.Root, names); err != nil {
		return err
	}
	return h.checkState(tool, v)
}

// MakeHomeDirs makes root a home's shape: state/, data/ and config/, by the
// rules of SetUp. fm-spawn gives a secondmate's worktree this shape, since a
// secondmate runs with FM_HOME set to it.
func MakeHomeDirs(root string) error {
	return makeHomeDirs(root, []string{"state", "data", "config"})
}

// makeHomeDirs creates each root/name that is missing. Every one is checked
// before any is made, so a symlink or a file in one's place is refused,
// naming it, with nothing written.
func makeHomeDirs(root string, names []string) error {
	var missing []string
	for _, name := range names {
		p := filepath.Join(root, name)
		info, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, p)
		case err != nil:
			return state.Errorf(ErrNoHome, "%s cannot be read: %w", p, err)
		case info.Mode()&fs.ModeSymlink != 0:
			return state.Errorf(ErrNoHome, "%s is a symlink; fmctl never follows one into its records, so make it a directory of the home '%s' (nothing was written)", p, root)
		case !info.IsDir():
			return state.Errorf(ErrNoHome, "%s is not a directory; move it aside so fm-spawn can make the home's %s/ there (nothing was written)", p, name)
		}
	}
	for _, p := range missing {
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return state.Errorf(ErrNoHome, "cannot make %s in the home '%s': %w", filepath.Base(p), root, err)
		}
	}
	return nil
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
