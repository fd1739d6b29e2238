// Package tunables keeps config's table the one reader of FM_* variables:
// no other product file reads one, whether through os.Getenv, os.LookupEnv,
// an injected env func or a name held in a constant or variable first.
package tunables

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const root = "../.."

// tableFile owns every FM_* name a binary reads.
const tableFile = "config/tunables.go"

// edgeFile is where a binary reads its FM_* variables, once (edge.OSDeps).
const edgeFile = "cmd/internal/edge/edge.go"

// retiring are variables another change is deleting, read until it lands.
// Each says why; the entry goes with the read.
var retiring = map[string]string{}

// writtenOnly are names a file binds only to write them onto a child's
// command line, never to read them; each says where the value is read.
var writtenOnly = map[string]string{
	"harness/launch.go:FM_EVENT_KEY": "the launch line sets it for the agent's hooks; fm-control reads it through the table (Tunables.EventKey)",
}

var (
	fmName = regexp.MustCompile(`^FM_[A-Z0-9_]+$`)
	// envReader matches the names of the calls that read a variable:
	// os.Getenv, os.LookupEnv, and the injected env funcs (env, d.Env).
	envReader = regexp.MustCompile(`(?i)^(getenv|lookupenv|env)$`)
)

// TestNoFMVariableReadOutsideTheTable fails on a read of an FM_* variable
// outside config's table: an FM_ name passed to any call (a helper such as
// Duration(env, "FM_X", def) reads it), an FM_ prefix passed to an env
// reader, or an FM_ name bound to a constant or variable, which is how a
// name reaches a reader indirectly. A name inside a longer string (a
// message, "FM_HOME=" on a launch line) is not a read. Files built only
// with -tags fmfault hold the test build's fault seams, which release
// binaries lack (tests/faults proves it) and which are no tunable. And only
// the binaries' edge calls config.ReadTunables.
func TestNoFMVariableReadOutsideTheTable(t *testing.T) {
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || d.Name() == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == tableFile {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if faultOnly(f) {
			return nil
		}
		files++
		if rel != edgeFile && callsReadTunables(f) {
			t.Errorf("%s calls config.ReadTunables; the environment is read once, in %s, and the values passed down", rel, edgeFile)
		}
		for _, r := range reads(fset, f) {
			if why, ok := retiring[r.name]; ok {
				t.Logf("%s reads %s, allowed while %s", rel, r.name, why)
				continue
			}
			if _, ok := writtenOnly[rel+":"+r.name]; ok && r.how == "binds a name to" {
				continue
			}
			t.Errorf("%s:%d %s %s; add it to the table in %s and pass its value down", rel, r.line, r.how, r.name, tableFile)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("scanned only %d files; the walk is broken", files)
	}
}

type read struct {
	name, how string
	line      int
}

// reads finds f's FM_* reads by the rules TestNoFMVariableReadOutsideTheTable
// states.
func reads(fset *token.FileSet, f *ast.File) []read {
	var out []read
	lit := func(e ast.Expr) (string, int, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", 0, false
		}
		s, err := strconv.Unquote(b.Value)
		return s, fset.Position(b.Pos()).Line, err == nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			reader := envReader.MatchString(callName(n.Fun))
			for _, a := range n.Args {
				for bin, ok := a.(*ast.BinaryExpr); ok && reader; bin, ok = a.(*ast.BinaryExpr) {
					a = bin.X // "FM_" + name starts with the prefix
				}
				if s, pos, ok := lit(a); ok && (fmName.MatchString(s) || reader && strings.HasPrefix(s, "FM_")) {
					out = append(out, read{s, "passes to " + callName(n.Fun), pos})
				}
			}
		case *ast.ValueSpec:
			for _, v := range n.Values {
				if s, pos, ok := lit(v); ok && fmName.MatchString(s) {
					out = append(out, read{s, "binds a name to", pos})
				}
			}
		case *ast.AssignStmt:
			for _, v := range n.Rhs {
				if s, pos, ok := lit(v); ok && fmName.MatchString(s) {
					out = append(out, read{s, "binds a name to", pos})
				}
			}
		}
		return true
	})
	return out
}

// callsReadTunables reports whether f reads the environment into Tunables.
func callsReadTunables(f *ast.File) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && callName(c.Fun) == "ReadTunables" {
			found = true
		}
		return !found
	})
	return found
}

func callName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// faultOnly reports whether f builds only with the fmfault tag.
func faultOnly(f *ast.File) bool {
	for _, g := range f.Comments {
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			return expr.Eval(func(tag string) bool { return tag == "fmfault" }) && !expr.Eval(func(string) bool { return false })
		}
	}
	return false
}

// TestReadsSeesEveryForm keeps the scan honest: each way a name can reach
// an env reader is found, and a name that is only mentioned is not.
func TestReadsSeesEveryForm(t *testing.T) {
	src := `package p
const viaConst = "FM_A"
func f(env func(string) string, d deps) {
	os.Getenv("FM_B")
	os.LookupEnv("FM_C")
	env("FM_D")
	d.Env("FM_" + "E")
	name := "FM_F"
	_ = errors.New("FM_HOME is not set")
	_ = "FM_HOME=" + home
	_ = []string{"FM_PI_HARNESS=pi"}
	_ = fmt.Sprintf("FM_G is %s", g)
	config.Duration(env, "FM_H", 0)
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range reads(fset, f) {
		got = append(got, r.name)
	}
	want := []string{"FM_A", "FM_B", "FM_C", "FM_D", "FM_", "FM_F", "FM_H"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("reads = %v, want %v", got, want)
	}
}
