package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"fmctl/state"
)

// maxConfigBytes bounds a config file: they hold a line or a short table.
const maxConfigBytes = 1 << 20

// readConfig reads a config file as a user's file (a symlink into a
// dotfiles repository is followed) that must be a regular file: a FIFO in
// its place would otherwise hang every verb that reads it.
func readConfig(path string) ([]byte, error) {
	return state.ReadUserFile(path, maxConfigBytes)
}

// firstLine is the first line of path, trimmed, that is neither blank nor
// a comment; a missing file is "".
func firstLine(path string) (string, error) {
	data, err := readConfig(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", err // an *fs.PathError, which names the file
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			return line, nil
		}
	}
	return "", nil
}

// firstWord is the first word of firstLine.
func firstWord(path string) (string, error) {
	line, err := firstLine(path)
	if line == "" {
		return "", err
	}
	return strings.Fields(line)[0], nil
}

// BackendFile reads config/backend: the backend new tasks of this home use
// when neither --backend nor FM_BACKEND names one.
func (h Home) BackendFile() (string, error) {
	return firstWord(filepath.Join(h.Config, "backend"))
}

// CrewHarness reads config/crew-harness: the harness a ship or scout gets
// when fm-spawn is given no --harness. "default" is no choice.
func (h Home) CrewHarness() (string, error) {
	w, err := firstWord(filepath.Join(h.Config, "crew-harness"))
	if w == "default" {
		w = ""
	}
	return w, err
}
