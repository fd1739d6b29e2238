// Package layers keeps the house's layers readable from its folders
// (../shared/spec/STYLE.md, "Layers you can see in the folders"): the CLI
// edge over the domain over the adapters and the records. It reads the
// module's import graph from `go list` and fails on any import that breaks
// the table below.
package layers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "fmctl"

// The binaries' packages: one per binary, each the CLI edge of its verbs.
var binaries = []string{
	"fmctl/cmd/internal/control",
	"fmctl/cmd/internal/send",
	"fmctl/cmd/internal/spawn",
	"fmctl/cmd/internal/teardown",
}

// The edge the binaries share: presentation (cli), the process's
// side-effect edges (edge), and the commands that relay a verb to another
// host (fleet).
var sharedEdge = []string{
	"fmctl/cmd/internal/cli",
	"fmctl/cmd/internal/edge",
	"fmctl/cmd/internal/fleet",
}

// The multiplexer adapters, each a tree of its own, and the one package
// that opens them by name.
var adapters = []string{
	"fmctl/backends/tmux/...",
	"fmctl/backends/herdr/...",
	"fmctl/backends/zellij/...",
}

const opener = "fmctl/backends/mux"

// Every other package under cmd/internal is the domain (task, launch,
// lifecycle, deliver, retire, fault, ...): a new package starts there, on
// the stricter side, until the table says otherwise.

// A rule forbids the packages matched by from to import those matched by
// any of to. Deep rules hold for everything a package imports, however
// indirectly; the others for its own import lines.
type rule struct {
	name string
	from func(pkg string) bool
	to   []string // import paths; a trailing "/..." matches the tree
	deep bool
	why  string
}

var rules = append([]rule{
	{
		name: "the domain does not import the CLI edge",
		from: isDomain,
		to:   append(append([]string{}, sharedEdge...), binaries...),
		deep: true,
		why:  "a domain package returns a fault.Error and facts; only the edge chooses words, exit codes and output",
	},
	{
		name: "cli knows no backend, record or configuration",
		from: is("fmctl/cmd/internal/cli"),
		to:   []string{"fmctl/backends/...", "fmctl/config", "fmctl/state"},
		why:  "cli prints; what it needs of the process comes as a cli.IO and functions from cmd/internal/edge",
	},
	{
		name: "cli does not reach a backend even indirectly",
		from: is("fmctl/cmd/internal/cli"),
		to:   []string{"fmctl/backends/..."},
		deep: true,
		why:  "presentation must not drag the multiplexer adapters in (fault's code table reaches state and config for their error kinds, never a backend)",
	},
	{
		name: "no binary's package imports another's",
		from: func(pkg string) bool { return slices.Contains(binaries, pkg) },
		to:   binaries,
		deep: true,
		why:  "what two binaries share lives in a shared package (launch, lifecycle, task), not in one of them",
	},
	{
		name: "only the opener imports an adapter",
		from: func(pkg string) bool { return pkg != opener && !matchesAny(pkg, adapters) },
		to:   adapters,
		why:  "a caller holds a backends.Backend and asks it for optional abilities (backends.PaneFinder, ...); backends/mux alone names the adapters, so a new multiplexer is one package and one case there",
	},
	{
		name: "the process reading knows no multiplexer",
		from: is("fmctl/backends/proc"),
		to:   append([]string{opener}, adapters...),
		deep: true,
		why:  "backends/proc is shared by every adapter; an adapter's own process facts (herdr's shell_pid, zellij's pane environment) stay in the adapter",
	},
	{
		name: "backends is the bottom of its tree",
		from: is("fmctl/backends"),
		to:   []string{"fmctl/backends/..."},
		deep: true,
		why:  "the Backend interface and the Runner are what everything below and beside it imports; a package it imported could not import it back",
	},
	{
		name: "the adapters and records import nothing of the binaries",
		from: func(pkg string) bool { return !strings.HasPrefix(pkg, "fmctl/cmd/") && !isTooling(pkg) },
		to:   []string{"fmctl/cmd/..."},
		deep: true,
		why:  "backends, state, config, harness, authority and remote sit below every binary",
	},
}, adapterRules()...)

// startsProcesses are the only packages that may import os/exec, each with
// what it does with it. Only backends starts a process (the runner, see
// TestOnlyTheRunnerStartsProcesses); every other program (ssh to another
// host, fm-control serve's verbs, the keeper) starts through it.
var startsProcesses = map[string]string{
	"fmctl/backends/...":   "the runner, for the multiplexer adapters (tmux, herdr and zellij clients), ps where there is no /proc, git, sqlite3, ssh and this host's own binaries",
	"fmctl/remote":         "holds the exec.Cmd of a long-lived ssh session, which backends made",
	"fmctl/harness/wiring": "looks up fm-control on PATH for the hook lines it writes; runs nothing",
}

// adapterRules: the adapters do not import each other, even through a
// third package (backends/mux reaches them all): what two of them share
// lives in backends or backends/proc.
func adapterRules() []rule {
	var out []rule
	for _, a := range adapters {
		out = append(out, rule{
			name: "an adapter imports no other adapter",
			from: func(pkg string) bool { return matchesAny(pkg, []string{a}) },
			to:   append([]string{opener}, slices.DeleteFunc(slices.Clone(adapters), func(b string) bool { return b == a })...),
			deep: true,
			why:  "each multiplexer is one package; what two adapters share (the paste rule, the record field checks, the process table) sits below them",
		})
	}
	return out
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func TestImportsKeepTheLayers(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// violations is every import of pkgs that breaks a rule.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		for _, r := range rules {
			if !r.from(p.ImportPath) {
				continue
			}
			imports := p.Imports
			if r.deep {
				imports = p.Deps
			}
			for _, imp := range imports {
				if imp == p.ImportPath || !matchesAny(imp, r.to) {
					continue
				}
				how := "imports"
				if !slices.Contains(p.Imports, imp) {
					how = "reaches (through its imports)"
				}
				out = append(out, fmt.Sprintf("%s %s %s\n\trule: %s\n\twhy: %s", p.ImportPath, how, imp, r.name, r.why))
			}
		}
	}
	return out
}

// Each rule about the adapters fails on the import it forbids. Some of
// those imports cannot be written today without an import cycle (every
// adapter imports backends/proc, and everything imports backends), so the
// rules are fed the graph such an import would make.
func TestTheAdapterRulesCatchTheirImports(t *testing.T) {
	for _, c := range []struct {
		name, from, imp string
		via             string // a package between, for a reach through it
		rule            string
	}{
		{name: "tmux imports herdr", from: "fmctl/backends/tmux", imp: "fmctl/backends/herdr", rule: "an adapter imports no other adapter"},
		{name: "zellij reaches tmux", from: "fmctl/backends/zellij", via: "fmctl/backends/git", imp: "fmctl/backends/tmux", rule: "an adapter imports no other adapter"},
		{name: "zellij imports the opener", from: "fmctl/backends/zellij", imp: opener, rule: "an adapter imports no other adapter"},
		{name: "a domain package imports tmux", from: "fmctl/cmd/internal/task", imp: "fmctl/backends/tmux", rule: "only the opener imports an adapter"},
		{name: "a binary's package imports zellij", from: "fmctl/cmd/internal/spawn", imp: "fmctl/backends/zellij", rule: "only the opener imports an adapter"},
		{name: "backends/git imports herdr", from: "fmctl/backends/git", imp: "fmctl/backends/herdr", rule: "only the opener imports an adapter"},
		{name: "proc imports zellij", from: "fmctl/backends/proc", imp: "fmctl/backends/zellij", rule: "the process reading knows no multiplexer"},
		{name: "proc reaches tmux", from: "fmctl/backends/proc", via: "fmctl/harness", imp: "fmctl/backends/tmux", rule: "the process reading knows no multiplexer"},
		{name: "backends imports proc", from: "fmctl/backends", imp: "fmctl/backends/proc", rule: "backends is the bottom of its tree"},
	} {
		p := pkg{ImportPath: c.from, Imports: []string{c.imp}, Deps: []string{c.imp}}
		if c.via != "" {
			p = pkg{ImportPath: c.from, Imports: []string{c.via}, Deps: []string{c.via, c.imp}}
		}
		found := false
		for _, v := range violations([]pkg{p}) {
			found = found || strings.Contains(v, "rule: "+c.rule+"\n")
		}
		if !found {
			t.Errorf("%s: no violation of %q in %q", c.name, c.rule, violations([]pkg{p}))
		}
	}
	// The imports an adapter tree makes within itself, and the opener's,
	// are the layering.
	for _, p := range []pkg{
		{ImportPath: "fmctl/backends/tmux", Imports: []string{"fmctl/backends/proc"}},
		{ImportPath: opener, Imports: []string{"fmctl/backends/tmux", "fmctl/backends/herdr", "fmctl/backends/zellij"}},
	} {
		p.Deps = p.Imports
		if v := violations([]pkg{p}); len(v) > 0 {
			t.Errorf("%s: %q", p.ImportPath, v)
		}
	}
}

func TestOnlyTheAllowedPackagesStartProcesses(t *testing.T) {
	allowed := make([]string, 0, len(startsProcesses))
	for p := range startsProcesses {
		allowed = append(allowed, p)
	}
	for _, p := range listPackages(t) {
		if isTooling(p.ImportPath) || !slices.Contains(p.Imports, "os/exec") {
			continue
		}
		if !matchesAny(p.ImportPath, allowed) {
			t.Errorf("%s imports os/exec\n\trule: only the packages in startsProcesses import os/exec; only the runner (backends) starts a process\n\tfix: go through the runner, or add it to the table with what it does with os/exec", p.ImportPath)
		}
	}
}

// The table must name real packages, or a renamed one would slip through.
func TestTheTableNamesRealPackages(t *testing.T) {
	have := map[string]bool{}
	for _, p := range listPackages(t) {
		have[p.ImportPath] = true
	}
	named := append(append(append([]string{opener}, binaries...), sharedEdge...), "fmctl/backends/proc")
	for _, a := range adapters {
		named = append(named, strings.TrimSuffix(a, "/..."))
	}
	for p := range startsProcesses {
		named = append(named, strings.TrimSuffix(p, "/..."))
	}
	for _, p := range named {
		if !have[p] {
			t.Errorf("the table names %s, which go list does not find", p)
		}
	}
}

func isDomain(pkg string) bool {
	return strings.HasPrefix(pkg, "fmctl/cmd/internal/") && !slices.Contains(binaries, pkg) && !slices.Contains(sharedEdge, pkg)
}

// isTooling is what no binary links: the test suites and their fakes, and
// the generators under scripts.
func isTooling(pkg string) bool {
	return strings.HasPrefix(pkg, "fmctl/tests/") || strings.HasPrefix(pkg, "fmctl/scripts/")
}

func is(want string) func(string) bool { return func(pkg string) bool { return pkg == want } }

func matchesAny(pkg string, patterns []string) bool {
	for _, p := range patterns {
		if tree, ok := strings.CutSuffix(p, "/..."); ok {
			if pkg == tree || strings.HasPrefix(pkg, tree+"/") {
				return true
			}
		} else if pkg == p {
			return true
		}
	}
	return false
}

// listPackages is every package of the module, its own imports and all it
// reaches, without test files (a test may import anything it exercises).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}
