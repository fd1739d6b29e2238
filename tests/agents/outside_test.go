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
// its first start), the real HOME and the temporary folder (gemini leaves
// its client-error reports there, Bun-built CLIs a 13 MB library on every
// start), each read before the run and after. Every lab points HOME,
// NPM_CONFIG_PREFIX and TMPDIR inside itself and turns auto-update off;
// this proves they stayed there.
type outside struct {
	dirs []string // the folders watched
	// newOnly are the folders where only new entries count (the Go build
	// cache and the shell touch those in HOME), each with the name
	// prefixes of the entries the tier makes there itself.
	newOnly map[string][]string
	names   map[string]string // entry path -> its mtime, at the first read
}

// tierTemp is what the tier itself makes in the temporary folder: its
// labs, its build, the testing package's and the go tool's folders.
var tierTemp = []string{"fmagents-", "fmctl-agents-bin-", "TestRealAgents", "go-build", "go-test-script"}

// watchOutside reads the folders an agent CLI must not write to: the
// global prefix's lib/node_modules and bin, and the top level of the real
// HOME and of the temporary folder.
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
	tmp := os.TempDir()
	o := &outside{dirs: []string{filepath.Join(prefix, "lib", "node_modules"), filepath.Join(prefix, "bin"), home, tmp},
		newOnly: map[string][]string{home: nil, tmp: append(slices.Clone(tierTemp), outputsIn(tmp)...)}}
	o.names = o.read()
	return o, nil
}

// outputsIn names the entries of dir that the tier's report and captures
// (FM_AGENTS_REPORT, FM_AGENTS_CAPTURES) are written under, which are its
// own.
func outputsIn(dir string) []string {
	var out []string
	for _, v := range []string{"FM_AGENTS_REPORT", "FM_AGENTS_CAPTURES"} {
		rel, err := filepath.Rel(dir, os.Getenv(v))
		if os.Getenv(v) == "" || err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		out = append(out, strings.Split(rel, string(filepath.Separator))[0])
	}
	return out
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
			own, newOnly := o.newOnly[d]
			if slices.ContainsFunc(own, func(p string) bool { return strings.HasPrefix(e.Name(), p) }) {
				continue
			}
			stamp := ""
			if !newOnly {
				// An update rewrites an installed package in place.
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
	o := &outside{dirs: []string{modules, home}, newOnly: map[string][]string{home: {"fmagents-"}}}
	o.names = o.read()
	if c := o.changes(); len(c) != 0 {
		t.Fatalf("nothing written, changes %v", c)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(touched, later, later)
	if c := o.changes(); len(c) != 0 {
		t.Fatalf("an entry of HOME touched: changes %v, want none", c)
	}
	if err := os.Mkdir(filepath.Join(home, "fmagents-claude-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if c := o.changes(); len(c) != 0 {
		t.Fatalf("a lab of the tier's own made: changes %v, want none", c)
	}
	os.Chtimes(pkg, later, later)
	os.Mkdir(filepath.Join(home, ".qwen"), 0o755)
	c := o.changes()
	if len(c) != 2 || !strings.HasPrefix(c[0], "changed "+pkg) || !strings.HasPrefix(c[1], "new "+filepath.Join(home, ".qwen")) {
		t.Fatalf("changes %v, want the rewritten package and the new HOME entry", c)
	}
}
