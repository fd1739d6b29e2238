package config

import (
	"path/filepath"
	"strings"
)

// Pin is the `<harness> [model] [effort]` line of config/secondmate-harness.
type Pin struct {
	Harness string
	Model   string
	Effort  string
	Path    string
}

// SecondmatePin reads config/secondmate-harness: its first non-empty line
// that is not a comment. A missing file, or the word "default", is no pin.
func (h Home) SecondmatePin() (Pin, bool, error) {
	path := filepath.Join(h.Config, "secondmate-harness")
	line, err := firstLine(path)
	if err != nil || line == "" {
		return Pin{}, false, err
	}
	f := strings.Fields(line)
	if f[0] == "default" {
		return Pin{}, false, nil
	}
	p := Pin{Harness: f[0], Path: path}
	if len(f) > 1 {
		p.Model = f[1]
	}
	if len(f) > 2 {
		p.Effort = f[2]
	}
	return p, true, nil
}
