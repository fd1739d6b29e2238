// Package literals holds the test that keeps each table fact in one owner:
// no product file outside harness/ and backends/ spells a harness, backend,
// key or kind name, and none outside state/ and backends/ spells a meta
// record or journal key where a record is read or written. The names come from the
// table and state themselves, so a new harness or key is covered as soon as
// it is added.
package literals

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"fmctl/harness"
	"fmctl/state"
)

// tableOwners may spell table names: they are the table and the adapters
// that map its names to each multiplexer's own CLI.
var tableOwners = []string{"harness/", "backends/"}

// recordOwners may spell record keys outside the accessors.
var recordOwners = []string{"state/", "backends/"}

// exempt are the product files that must spell some table names, and which
// kinds of name each may spell. Keep it short: every entry says why.
var exempt = []struct {
	prefix string
	kinds  []string
	why    string
}{
	{"tests/agents/", []string{"harness name"}, "drives and records the real agent CLIs by their own names"},
	{"tests/fakeframe/", []string{"harness name"}, "the one agent emulation: draws each harness's composer as that harness does"},
	{"tests/fakes/", []string{"key name", "backend name"}, "each fake multiplexer parses its own CLI, key spellings and program name included"},
}

func exempted(rel, kind string) bool {
	for _, e := range exempt {
		if strings.HasPrefix(rel, e.prefix) && slices.Contains(e.kinds, kind) {
			return true
		}
	}
	return false
}

// recordMethods read or write a state.Record by key.
var recordMethods = map[string]bool{"Get": true, "Lookup": true, "Set": true, "Count": true, "Delete": true}

func names() map[string]string {
	out := map[string]string{}
	for _, n := range harness.Names() {
		out[n] = "harness name"
	}
	for _, n := range harness.BackendNames() {
		out[n] = "backend name"
	}
	for _, k := range append(harness.KeyNames(), string(harness.KeyEnd)) {
		out[k] = "key name"
	}
	for _, k := range harness.KindNames() {
		out[k] = "kind name"
	}
	return out
}

// recordKeys are the meta record's keys and the relaunch journal's shared
// phase keys: state owns both formats.
func recordKeys() map[string]bool {
	keys := map[string]bool{}
	for _, k := range append(state.MetaKeys(), state.JournalRollback, state.JournalRelaunchTx, state.JournalReady, state.JournalRecovered) {
		keys[k] = true
	}
	return keys
}

func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func under(rel string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}

// productFiles lists the module's non-test .go files, slash-separated and
// relative to the root.
func productFiles(t *testing.T, root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			rel, _ := filepath.Rel(root, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// violations returns file:line: messages for one parsed file.
func violations(fset *token.FileSet, f *ast.File, rel string, table map[string]string, keys map[string]bool) []string {
	checkTable := !under(rel, tableOwners)
	checkKeys := !under(rel, recordOwners)
	skip := map[*ast.BasicLit]bool{} // import paths and struct tags are not values
	var out []string
	report := func(lit *ast.BasicLit, what, value string) {
		out = append(out, fset.Position(lit.Pos()).String()+": "+what+" "+strconv.Quote(value)+" spelled outside its owner")
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			skip[n.Path] = true
		case *ast.Field:
			if n.Tag != nil {
				skip[n.Tag] = true
			}
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !checkKeys || !ok || !recordMethods[sel.Sel.Name] || len(n.Args) == 0 {
				return true
			}
			if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil && keys[v] {
					report(lit, "record key", v)
				}
			}
		case *ast.BasicLit:
			if !checkTable || skip[n] || n.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(n.Value); err == nil && table[v] != "" && !exempted(rel, table[v]) {
				report(n, table[v], v)
			}
		}
		return true
	})
	return out
}

func TestNoTableOrRecordNameOutsideItsOwner(t *testing.T) {
	root := moduleRoot(t)
	table := names()
	keys := recordKeys()
	var bad []string
	checked := 0
	for _, rel := range productFiles(t, root) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", rel, err)
		}
		checked++
		for _, v := range violations(fset, f, rel, table, keys) {
			rel, _ := filepath.Rel(root, v)
			bad = append(bad, rel)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d product files checked; the walk is not reading the module", checked)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// The check itself must catch each kind of spelling, or a clean run proves
// nothing.
func TestTheCheckCatchesEachSpelling(t *testing.T) {
	src := `package p
import "fmctl/harness"
type T struct{ A string ` + "`toml:\"tmux\"`" + ` }
func f(r rec) {
	_ = r.Get("window")
	r.Set("backend", "x")
	_ = "codex"
	_ = "zellij"
	_ = "C-c"
	_ = "secondmate"
	_ = "a tmux session"
	_ = harness.BackendTmux
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := recordKeys()
	got := violations(fset, f, "cmd/internal/p/p.go", names(), keys)
	want := []string{`record key "window"`, `record key "backend"`, `harness name "codex"`, `backend name "zellij"`, `key name "C-c"`, `kind name "secondmate"`}
	if len(got) != len(want) {
		t.Fatalf("found %d spellings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("violation %d = %s, want %s", i, got[i], w)
		}
	}
	if owner := violations(fset, f, "harness/p.go", names(), keys); len(owner) != 2 {
		t.Errorf("in harness/ only the two record keys count, got %v", owner)
	}
	// A fake multiplexer may spell keys and backends, never a harness.
	fake := violations(fset, f, "tests/fakes/x/x.go", names(), keys)
	if len(fake) != 4 || !strings.Contains(fake[2], `harness name "codex"`) || !strings.Contains(fake[3], `kind name "secondmate"`) {
		t.Errorf("in tests/fakes/ want the record keys, codex and secondmate only, got %v", fake)
	}
}
