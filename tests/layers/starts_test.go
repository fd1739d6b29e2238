package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// processStarts are the functions that start a process, by the package
// that has them.
var processStarts = map[string][]string{
	"os/exec":               {"Command", "CommandContext"},
	"os":                    {"StartProcess"},
	"syscall":               {"ForkExec", "StartProcess", "Exec"},
	"golang.org/x/sys/unix": {"Exec"},
}

// theRunner is the one file that starts processes, relative to the module
// root; every other product file asks it (backends.Cmd.Command for a
// process a caller holds or streams).
var theRunner = []string{
	"backends/runner.go",
}

// One way to start a process: os/exec, in the runner. A process started
// anywhere else escapes its process group's kill, the bound on its pipes
// and the runner's trace.
func TestOnlyTheRunnerStartsProcesses(t *testing.T) {
	const root = "../.."
	fset := token.NewFileSet()
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || rel == "tests") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || slices.Contains(theRunner, rel) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		seen++
		for _, v := range starts(fset, f) {
			t.Errorf("%s\n\trule: only the runner starts a process\n\tfix: run it through a backends.Runner, or backends.Cmd.Command for a process held or streamed", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 100 {
		t.Fatalf("the scan read only %d files; it is broken", seen)
	}
}

// starts is every place f starts a process, or builds an exec.Cmd by hand.
func starts(fset *token.FileSet, f *ast.File) []string {
	imported := map[string]string{} // the name a file uses -> the import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imported[name] = p
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		var sel *ast.SelectorExpr
		var funcs []string
		switch n := n.(type) {
		case *ast.SelectorExpr:
			sel = n
		case *ast.CompositeLit:
			sel, _ = n.Type.(*ast.SelectorExpr)
			funcs = []string{"Cmd"}
		}
		if sel == nil {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		p := imported[x.Name]
		if funcs == nil {
			funcs = processStarts[p]
		} else if p != "os/exec" {
			return true
		}
		if slices.Contains(funcs, sel.Sel.Name) {
			out = append(out, fset.Position(sel.Pos()).String()+": "+p+"."+sel.Sel.Name)
		}
		return true
	})
	return out
}

// The rule fails on each way to start a process, however the package is
// named, and passes what only looks like one.
func TestTheStartRuleCatchesEveryStart(t *testing.T) {
	for src, want := range map[string]int{
		`import "os/exec"; var c = exec.Command("tmux")`:                          1,
		`import x "os/exec"; func f() { x.CommandContext(nil, "ssh").Run() }`:     1,
		`import "os/exec"; var c = &exec.Cmd{Path: "/bin/sh"}`:                    1,
		`import "os"; func f() { os.StartProcess("sh", nil, nil) }`:               1,
		`import "syscall"; func f() { syscall.ForkExec("sh", nil, nil) }`:         1,
		`import "golang.org/x/sys/unix"; func f() { unix.Exec("sh", nil, nil) }`:  1,
		`import "os/exec"; var c *exec.Cmd; var _, _ = exec.LookPath("tmux")`:     0,
		`import "fmctl/backends"; var c = backends.Cmd{Path: "ssh"}.Command(nil)`: 0,
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "planted.go", "package p; "+src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if got := starts(fset, f); len(got) != want {
			t.Errorf("%s: found %q, want %d", src, got, want)
		}
	}
}
