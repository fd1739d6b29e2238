package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// File is config/fm.toml (docs/config.md is its reference, kept complete by
// tests/docpaths). Every section is optional; only fm-spawn and
// relaunch read it, so no other verb pays for the decode.
//
//	[tmux]
//	session = "firstmate"      # the session new task windows go into
//	[herdr]
//	session = "default"
//	[zellij]
//	session = "firstmate"
//	[spawn]
//	worktrees = "~/wt"         # new task worktrees: <dir>/<id> (default <project>-worktrees/<id> beside the project)
//	[harness.claude]
//	binary = "/opt/claude/bin/claude"
//	args = ["--verbose"]
type File struct {
	Tmux    SessionConfig              `toml:"tmux"`
	Herdr   SessionConfig              `toml:"herdr"`
	Zellij  SessionConfig              `toml:"zellij"`
	Backend string                     `toml:"backend"`
	Spawn   SpawnConfig                `toml:"spawn"`
	Harness map[string]HarnessOverride `toml:"harness"`
}

// SessionConfig names a backend's container for new endpoints.
type SessionConfig struct {
	Session string `toml:"session"`
}

// SpawnConfig is where fm-spawn --project puts new task worktrees.
type SpawnConfig struct {
	Worktrees string `toml:"worktrees"`
}

// HarnessOverride changes how one harness is launched on this machine.
type HarnessOverride struct {
	Binary string   `toml:"binary"`
	Args   []string `toml:"args"`
}

// FilePath is the home's config/fm.toml.
func (h Home) FilePath() string { return filepath.Join(h.Config, "fm.toml") }

// LoadFile reads config/fm.toml; a missing file is an empty config. Unknown
// keys are refused, so a typo cannot silently fall back to a default.
func (h Home) LoadFile() (File, error) {
	var f File
	path := h.FilePath()
	data, err := readConfig(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return File{}, nil
		}
		return File{}, fmt.Errorf("config %s: %w", path, err)
	}
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return File{}, fmt.Errorf("config %s: %w", path, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		keys := make([]string, len(undecoded))
		for i, k := range undecoded {
			keys[i] = k.String()
		}
		return File{}, fmt.Errorf("config %s has unknown keys: %s", path, strings.Join(keys, ", "))
	}
	return f, nil
}
