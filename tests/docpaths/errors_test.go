package docpaths

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// productLiterals is every string literal in the product's Go code (tests
// excluded): the text every message is made from.
func productLiterals(t *testing.T) []string {
	var lits []string
	fset := token.NewFileSet()
	for _, dir := range []string{"cmd", "state", "config", "backends", "harness"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						lits = append(lits, s)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return lits
}

// section is the text of a document's "## heading" section, up to the next
// one.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	_, text, ok := strings.Cut(string(data), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("%s has no '## %s' section", doc, heading)
	}
	text, _, _ = strings.Cut(text, "\n## ")
	return text
}

// readmeErrors is every `error: ...` quoted in README.md's refusals section.
func readmeErrors(t *testing.T) []string {
	var msgs []string
	for _, m := range regexp.MustCompile("`error: ([^`]+)`").FindAllStringSubmatch(section(t, "README.md", "When fmctl refuses"), -1) {
		msgs = append(msgs, m[1])
	}
	return msgs
}

// verb splits a format string at its verbs (%s, %v, %q, %d, %w, %%...).
var verb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

// printed joins the pieces of text the code prints verbatim, each literal
// split at its format verbs, with NUL marking where a piece starts and ends.
func printed(lits []string) string {
	var b strings.Builder
	b.WriteByte(0)
	for _, l := range lits {
		for _, s := range verb.Split(l, -1) {
			if s != "" {
				b.WriteString(s)
				b.WriteByte(0)
			}
		}
	}
	return b.String()
}

// covered reports whether frag is printed verbatim by the code: inside one
// piece, or across at most pieces pieces that meet where a verb or a
// concatenation joins them ("then %s" + "fm-spawn <id> ..."). A piece that
// starts mid-fragment must start where its literal or verb does.
func covered(text, frag string, atStart bool, pieces int) bool {
	if frag == "" {
		return true
	}
	if pieces == 0 {
		return false
	}
	start := ""
	if atStart {
		start = "\x00"
	}
	if strings.Contains(text, start+frag) {
		return true
	}
	for k := 1; k < len(frag); k++ {
		if strings.Contains(text, start+frag[:k]+"\x00") && covered(text, frag[k:], true, pieces-1) {
			return true
		}
	}
	return false
}

// TestReadmeErrorsAreTheRealOnes keeps the README's refusal table true: each
// quoted message, split at its <placeholders>, must be text the code prints,
// so a reworded message fails here until the README follows.
func TestReadmeErrorsAreTheRealOnes(t *testing.T) {
	text, msgs := printed(productLiterals(t)), readmeErrors(t)
	if len(msgs) < 10 {
		t.Fatalf("found %d quoted errors in README.md; the scan is broken", len(msgs))
	}
	placeholder := regexp.MustCompile(`<[^<>]+>`)
	for _, msg := range msgs {
		for _, frag := range placeholder.Split(msg, -1) {
			if len(strings.TrimSpace(frag)) >= 3 && !covered(text, frag, false, 3) {
				t.Errorf("README.md quotes %q, but the code prints no %q", "error: "+msg, frag)
			}
		}
	}
}
