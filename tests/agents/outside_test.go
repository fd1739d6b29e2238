package agents

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// outside is what the tier checks an agent CLI never wrote to: the global
// npm prefix (one CLI updated itself there with `npm install --global` on
// its first start) and the real HOME, each read before the run and after.
// Every lab points HOME and NPM_CONFIG_PREFIX inside itself and turns
// auto-update off; this proves they stayed there.
type outside struct {
	dirs  []string          // the folders watched, home last
	home  string            // the real HOME, where only new entries count
	names map[string]string // entry path -> its mtime, at the first read
}

// watchOutside reads the folders an agent CLI must not write to: the
// global prefix's lib/node_modules and bin, and the real HOME's top level.
func watchOutside() (*outside, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "prefix", "--global").Output()
	if err != nil {
		return nil, fmt.Errorf("npm prefix --global: %w", err)
	}
	prefix := strings.TrimSpace(string(out))
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	o := &outside{dirs: []string{filepath.Join(prefix, "lib", "node_modules"), filepath.Join(prefix, "bin"), home}, home: home}
	o.names = o.read()
	return o, nil
}

func (o *outside) read() map[string]string {
	names := map[string]string{}
	for _, d := range o.dirs {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				continue
			}
			stamp := ""
			if d != o.home {
				// An update rewrites an installed package in place; in
				// HOME only new entries count (the Go build cache and the
				// shell touch the ones there).
				stamp = info.ModTime().Format(time.RFC3339Nano)
			}
			names[filepath.Join(d, e.Name())] = stamp
		}
	}
	return names
}

// changes lists what appeared or changed since the first read.
func (o *outside) changes() []string {
	var out []string
	for name, stamp := range o.read() {
		before, ok := o.names[name]
		switch {
		case !ok:
			out = append(out, "new "+name)
		case before != stamp:
			out = append(out, "changed "+name)
		}
	}
	slices.Sort(out)
	return out
}

// The check fails on what it is for: a package rewritten under the prefix,
// a new entry in HOME; an entry HOME merely touched is no finding.
func TestOutsideSeesWritesOutsideTheLab(t *testing.T) {
	modules, home := t.TempDir(), t.TempDir()
	pkg := filepath.Join(modules, "some-cli")
	touched := filepath.Join(home, ".cache")
	for _, d := range []string{pkg, touched} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := &outside{dirs: []string{modules, home}, home: home}
	o.names = o.read()
	if c := o.changes(); len(c) != 0 {
		t.Fatalf("nothing written, changes %v", c)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(touched, later, later)
	if c := o.changes(); len(c) != 0 {
		t.Fatalf("an entry of HOME touched: changes %v, want none", c)
	}
	os.Chtimes(pkg, later, later)
	os.Mkdir(filepath.Join(home, ".qwen"), 0o755)
	c := o.changes()
	if len(c) != 2 || !strings.HasPrefix(c[0], "changed "+pkg) || !strings.HasPrefix(c[1], "new "+filepath.Join(home, ".qwen")) {
		t.Fatalf("changes %v, want the rewritten package and the new HOME entry", c)
	}
}
