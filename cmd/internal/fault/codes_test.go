package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"fmctl/config"
	"fmctl/state"
)

func TestCodeTableHasOneRowPerCodeAndKind(t *testing.T) {
	shape := regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	codes, kinds := map[Code]bool{}, map[error]bool{}
	for _, r := range Codes {
		if !shape.MatchString(string(r.Code)) {
			t.Errorf("code %q is not lower-case words joined by '-'", r.Code)
		}
		if codes[r.Code] {
			t.Errorf("code %q has two rows", r.Code)
		}
		codes[r.Code] = true
		if r.Kind != nil && kinds[r.Kind] {
			t.Errorf("kind %v maps to two codes", r.Kind)
		}
		kinds[r.Kind] = true
		if r.Meaning == "" || r.Class < ClassFailed || r.Class > ClassStalled {
			t.Errorf("row %q: meaning %q, class %d", r.Code, r.Meaning, r.Class)
		}
	}
	for _, k := range []error{state.ErrBadTaskID, state.ErrNoSuchTask, state.ErrBadRecord, state.ErrForeignEndpoint,
		state.ErrLockHeld, state.ErrTornRelaunch, state.ErrTornTeardown, config.ErrNoHome, config.ErrBadPin} {
		if !kinds[k] {
			t.Errorf("kind %v has no code", k)
		}
	}
}

func TestCodeOfNamesKindsThroughWrapsAndFallsBackByExit(t *testing.T) {
	noTask := state.Errorf(state.ErrNoSuchTask, "no task 'x'")
	for _, c := range []struct {
		err  error
		want Code
	}{
		{noTask, ENoSuchTask},
		{fmt.Errorf("load: %w", noTask), ENoSuchTask},
		{Failed("%w", noTask), ENoSuchTask},
		{Failed("cannot: %w and %w", errors.New("x"), state.Errorf(config.ErrNoHome, "FM_HOME")), ENoHome},
		{Failed("%v", noTask), ERefused}, // %v keeps only the sentence
		{Failed("task t1 is busy").Coded(EBusy), EBusy},
		{Failed("relaunch: %w", Failed("x").Coded(EDialog)).Coded(ERelaunchFailed), ERelaunchFailed},
		{Failed("relaunch: %w", Failed("x").Coded(EDialog)), EDialog},
		{Usage("bad flag"), EUsage},
		{Unconfirmed("maybe"), EUnconfirmed},
		{Timeout("late"), ETimeout},
		{errors.New("plain"), ERefused},
	} {
		if got := CodeOf(c.err); got != c.want {
			t.Errorf("CodeOf(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}

// docs/json.md's code list and docs/schema/error.json's enum are the table.
func TestDocsListEveryCode(t *testing.T) {
	var want strings.Builder
	want.WriteString("| code | exit | meaning |\n|---|---|---|\n")
	var codes []any
	for _, r := range Codes {
		fmt.Fprintf(&want, "| `%s` | %d | %s |\n", r.Code, r.Class, r.Meaning)
		codes = append(codes, string(r.Code))
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "json.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok1 := strings.Cut(string(doc), "<!-- codes:begin")
	_, rest, ok2 := strings.Cut(rest, "-->\n")
	got, _, ok3 := strings.Cut(rest, "<!-- codes:end -->")
	if !ok1 || !ok2 || !ok3 {
		t.Fatal("docs/json.md has no <!-- codes:begin --> ... <!-- codes:end --> section")
	}
	if got != want.String() {
		t.Errorf("docs/json.md's code table is not fault.Codes; it should read:\n%s", want.String())
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "schema", "error.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Code struct {
				Enum []any `json:"enum"`
			} `json:"code"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(schema.Properties.Code.Enum, codes) {
		t.Errorf("docs/schema/error.json's code enum is %v, want fault.Codes' %v", schema.Properties.Code.Enum, codes)
	}
}

// Every code in the table is printed by something: a fallback of CodeOf, an
// error kind the table maps, or a refusal in the CLI packages that names it.
func TestEveryCodeIsProduced(t *testing.T) {
	fset := token.NewFileSet()
	consts := map[string]Code{} // ENoSuchTask -> no-such-task
	f, err := parser.ParseFile(fset, "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Values) == 1 {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				consts[vs.Names[0].Name] = Code(strings.Trim(lit.Value, `"`))
			}
		}
		return true
	})
	named := map[Code]bool{}
	root := filepath.Join("..")
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			filepath.Dir(path) == "." {
			return err
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "fault" {
					if c, ok := consts[sel.Sel.Name]; ok {
						named[c] = true
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fallbacks := map[Code]bool{ERefused: true, EUsage: true, EUnconfirmed: true, ETimeout: true}
	for _, r := range Codes {
		if r.Kind == nil && !fallbacks[r.Code] && !named[r.Code] {
			t.Errorf("code %q: no refusal in cmd/internal names it, no error kind maps to it", r.Code)
		}
	}
}
