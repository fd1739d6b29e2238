// Package testbin builds the module's binaries for the suites that run them
// as processes (real tmux, real agents, sshd hosts, faults, benchmarks), so
// each suite's TestMain asks for what it needs instead of driving go build.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Root is the module's root directory, where go.mod is.
func Root() (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("find the go command: %w", err)
	}
	out, err := exec.Command(goTool, "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == "/dev/null" {
		return "", fmt.Errorf("go env GOMOD names no module (%q)", mod)
	}
	return filepath.Dir(mod), nil
}

// Build compiles pkgs (import paths or ./paths from the module root) into
// out: a directory when out ends in a path separator (one binary per
// package, named after it), else one binary at out. tags are build tags
// (fmfault for the fault seams), empty for a release build.
func Build(out string, tags []string, pkgs ...string) error {
	root, err := Root()
	if err != nil {
		return err
	}
	args := []string{"build"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(append(args, "-o", out), pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	// Static, as make build's are.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, msg)
	}
	return nil
}

// Dir is out as a directory for Build: one binary per package in it.
func Dir(out string) string {
	return strings.TrimSuffix(out, string(filepath.Separator)) + string(filepath.Separator)
}
