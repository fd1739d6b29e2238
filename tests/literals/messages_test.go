package literals

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// messageCalls build what a user reads: an error, a hint, a notice, a
// warning. A path into the source tree means nothing to someone who
// installed the binaries (a refusal once cited
// tests/captures/notes-claude-codex.md), so their text names none.
var messageCalls = map[string]bool{
	"Usage": true, "Failed": true, "Unconfirmed": true, "Timeout": true, "New": true,
	"Errorf": true, "Hint": true, "Notice": true, "Warn": true, "WithHints": true,
}

// sourcePath is a path into the source tree: the test tree, or a Go file.
var sourcePath = regexp.MustCompile(`(^|[\s('"])tests/|\b[\w-]+\.go\b`)

// messagePaths returns file:line: messages for the source-tree paths in
// the string literals of one file's message calls.
func messagePaths(fset *token.FileSet, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		var name string
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		case *ast.Ident:
			name = fn.Name
		}
		if !messageCalls[name] {
			return true
		}
		for _, a := range call.Args {
			lit, ok := a.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && sourcePath.MatchString(v) {
				out = append(out, fset.Position(lit.Pos()).String()+": a source-tree path in a message: "+v)
			}
		}
		return true
	})
	return out
}

func TestNoSourceTreePathInMessages(t *testing.T) {
	root := moduleRoot(t)
	checked := 0
	for _, rel := range productFiles(t, root) {
		if strings.HasPrefix(rel, "tests/") || strings.HasPrefix(rel, "scripts/") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", rel, err)
		}
		checked++
		for _, v := range messagePaths(fset, f) {
			t.Error(v)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d product files checked", checked)
	}
}

// The check must see a path wherever a message is built, and leave a
// home's own paths (config/fm.toml, state/<id>.audit) alone.
func TestTheMessageCheckCatchesASourcePath(t *testing.T) {
	src := `package p
func f() {
	_ = fault.Failed("key ends it (tests/captures/notes.md)")
	_ = fmt.Errorf("see harness/keyeffects.go")
	e.Hint("pin it in config/fm.toml")
	p.Notice("the trail is state/%s.audit", id)
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := messagePaths(fset, f)
	if len(got) != 2 || !strings.Contains(got[0], "tests/captures") || !strings.Contains(got[1], "keyeffects.go") {
		t.Fatalf("found %q, want the two source paths", got)
	}
}
