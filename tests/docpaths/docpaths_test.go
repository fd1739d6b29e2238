// Package docpaths checks that the prose stays true to the tree and the code:
// every repo path, link, make target, script and go test run README.md and
// docs/ name exists; docs/config.md lists exactly the config/fm.toml keys the
// code reads; the refusals the README quotes are the ones the code prints. So a
// move, rename or rewording cannot leave a reader following a stale reference.
package docpaths

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

const root = "../.."

// homeDirs are top-level names a firstmate home shares with the repo:
// `state/<id>.meta` and `config/fm.toml` are a home's files, so under these
// only a Go file is taken for a repo path.
var homeDirs = map[string]bool{"state": true, "config": true, "data": true}

// notOurs are top-level names that are not the repository's own: build
// output and caches (git ignores them), and docs/, because a backticked
// docs/... in the harness and backend notes cites an upstream project's
// file; this repo's docs are named by links, which are all checked.
var notOurs = map[string]bool{"bin": true, ".cache": true, ".git": true, "docs": true}

var (
	backticked = regexp.MustCompile("`([^`\n]+)`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	makeTarget = regexp.MustCompile(`^make ([a-z][a-z-]*)`)
	goTest     = regexp.MustCompile(`^go test( |$)`)
	testFunc   = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)\w*)\(`)
)

// reference is one thing a document names that must exist.
type reference struct{ doc, kind, text string }

// docs are the documents checked: README.md and every docs/**/*.md.
func docs(t *testing.T) []string {
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// repoPath reports whether a backticked token names a file or directory of
// this repository, as opposed to a home path, a command or a value.
func repoPath(tok string, top map[string]bool) bool {
	if strings.ContainsAny(tok, "<>*{}$ =:@\"'") || strings.HasPrefix(tok, "-") {
		return false
	}
	first, _, nested := strings.Cut(strings.TrimPrefix(tok, "./"), "/")
	if !top[first] || notOurs[first] || (!nested && first != "Makefile") {
		return false
	}
	if homeDirs[first] {
		return strings.HasSuffix(tok, ".go")
	}
	return true
}

func references(t *testing.T, doc string, top map[string]bool) []reference {
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var refs []reference
	text := string(data)
	for _, m := range backticked.FindAllStringSubmatch(text, -1) {
		tok := m[1]
		switch {
		case repoPath(tok, top):
			refs = append(refs, reference{doc, "path", tok})
		case makeTarget.MatchString(tok):
			refs = append(refs, reference{doc, "make", makeTarget.FindStringSubmatch(tok)[1]})
		}
		if goTest.MatchString(tok) {
			refs = append(refs, reference{doc, "go test", tok})
		}
		if strings.HasSuffix(tok, ".txtar") && !strings.Contains(tok, "/") {
			refs = append(refs, reference{doc, "script", "cmd/internal/scripts/testdata/" + tok})
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if m := makeTarget.FindStringSubmatch(line); m != nil {
			refs = append(refs, reference{doc, "make", m[1]})
		}
	}
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		target, anchor, _ := strings.Cut(m[1], "#")
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		if target == "" {
			target = filepath.Base(doc)
		}
		rel, err := filepath.Rel(root, filepath.Join(filepath.Dir(doc), target))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, reference{doc, "link", rel})
		if anchor != "" {
			refs = append(refs, reference{doc, "anchor", rel + "#" + anchor})
		}
	}
	return refs
}

func makeTargets(t *testing.T) map[string]bool {
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z-]*):`).FindAllStringSubmatch(string(data), -1) {
		targets[m[1]] = true
	}
	return targets
}

func TestDocsNameOnlyWhatExists(t *testing.T) {
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		top[e.Name()] = true
	}
	targets := makeTargets(t)
	checked := map[string]int{}
	for _, doc := range docs(t) {
		name, _ := filepath.Rel(root, doc)
		for _, r := range references(t, doc, top) {
			checked[r.kind]++
			switch r.kind {
			case "make":
				if !targets[r.text] {
					t.Errorf("%s: `make %s`: the Makefile has no such target", name, r.text)
				}
			case "anchor":
				if why := checkAnchor(r.text); why != "" {
					t.Errorf("%s: link %s: %s", name, r.text, why)
				}
			case "go test":
				if why := checkGoTest(r.text); why != "" {
					t.Errorf("%s: `%s`: %s", name, r.text, why)
				}
			default:
				// A script may be named by a pattern (relaunch_*.txtar).
				p := strings.TrimSuffix(strings.TrimPrefix(r.text, "./"), "/")
				if m, err := filepath.Glob(filepath.Join(root, p)); err != nil || len(m) == 0 {
					t.Errorf("%s: %s %q is not in the repository", name, r.kind, r.text)
				}
			}
		}
	}
	// The scan must have found the references a reader follows; a broken
	// pattern that matches nothing would pass vacuously.
	for _, kind := range []string{"path", "link", "make", "go test", "script"} {
		if checked[kind] == 0 {
			t.Errorf("found no %s references in README.md and docs/; the scan is broken", kind)
		}
	}
	t.Logf("checked %v", checked)
}

// checkGoTest says what is wrong with a documented `go test ./pkg [-run X]
// [-fuzz Y]` (a table cell escapes | as \|): the package must exist and each
// pattern must select at least one of its tests, or the reader runs nothing.
func checkGoTest(cmd string) string {
	words := strings.Fields(strings.ReplaceAll(cmd, `\|`, "|"))
	var pkg string
	patterns := map[string]string{}
	for i := 2; i < len(words); i++ {
		switch w := words[i]; {
		case strings.HasPrefix(w, "./"):
			pkg = w
		case (w == "-run" || w == "-fuzz") && i+1 < len(words):
			patterns[w] = strings.Trim(words[i+1], "'\"")
			i++
		}
	}
	if pkg == "" {
		return "names no package"
	}
	files, err := filepath.Glob(filepath.Join(root, pkg, "*_test.go"))
	if err != nil || len(files) == 0 {
		return "no such test package " + pkg
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err.Error()
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(data), -1) {
			names = append(names, m[1])
		}
	}
	for flag, pat := range patterns {
		if pat == "^$" {
			continue // runs no test, on purpose (a fuzz-only run)
		}
		top, _, _ := strings.Cut(pat, "/")
		re, err := regexp.Compile(top)
		if err != nil {
			return fmt.Sprintf("%s %q is not a regexp: %v", flag, pat, err)
		}
		if !slices.ContainsFunc(names, func(n string) bool {
			return re.MatchString(n) && (flag != "-fuzz" || strings.HasPrefix(n, "Fuzz"))
		}) {
			return fmt.Sprintf("%s %q selects no test in %s", flag, pat, pkg)
		}
	}
	return ""
}

// checkAnchor says what is wrong with a link doc.md#anchor: the anchor must
// be the GitHub slug of one of the document's headings.
func checkAnchor(ref string) string {
	doc, anchor, _ := strings.Cut(ref, "#")
	data, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		return err.Error()
	}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(data), -1) {
		if slug(m[1]) == anchor {
			return ""
		}
	}
	return "no heading of " + doc + " has the anchor #" + anchor
}

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces to hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
