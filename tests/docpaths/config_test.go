package docpaths

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"fmctl/config"
	"fmctl/harness"
)

// tomlKeys lists every key a struct decodes, dotted, with a map's keys as <name>.
func tomlKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		key := prefix + f.Tag.Get("toml")
		switch ft := f.Type; {
		case ft.Kind() == reflect.Struct:
			keys = append(keys, tomlKeys(ft, key+".")...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, tomlKeys(ft.Elem(), key+".<name>.")...)
		default:
			keys = append(keys, key)
		}
	}
	return keys
}

// TestConfigDocListsEveryKey keeps docs/config.md the reference for
// config/fm.toml: a key config.File decodes but the doc's table omits, or a
// documented key the code does not read (and would refuse as unknown), fails.
func TestConfigDocListsEveryKey(t *testing.T) {
	code := tomlKeys(reflect.TypeFor[config.File](), "")
	if len(code) < 7 {
		t.Fatalf("found only %d keys in config.File (%v); the walk is broken", len(code), code)
	}
	var doc []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(section(t, "docs/config.md", "`config/fm.toml`"), -1) {
		doc = append(doc, m[1])
	}
	for _, k := range code {
		if !slices.Contains(doc, k) {
			t.Errorf("config/fm.toml key %s is read by config.File but not documented in docs/config.md", k)
		}
	}
	for _, k := range doc {
		if !slices.Contains(code, k) {
			t.Errorf("docs/config.md documents %s, which config.File does not read", k)
		}
	}
}

// The generated block of docs/config.md's FM_* table.
const (
	tunablesBegin = "<!-- tunables:begin -->"
	tunablesEnd   = "<!-- tunables:end -->"
)

// TestConfigDocListsEveryVariable keeps docs/config.md's FM_* table the
// table in config/tunables.go, rendered: a variable added, dropped or
// reworded in the code fails here until the doc is regenerated
// (UPDATE_DOCS=1 rewrites it).
func TestConfigDocListsEveryVariable(t *testing.T) {
	path := filepath.Join(root, "docs", "config.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := harness.ReplaceReadmeBlock(string(data), tunablesBegin, tunablesEnd, config.Markdown(config.DefaultTunables().Settings(), false))
	if err != nil {
		t.Fatal(err)
	}
	if want == string(data) {
		return
	}
	if os.Getenv("UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/config.md's FM_* table differs from config/tunables.go; run UPDATE_DOCS=1 go test ./tests/docpaths -run TestConfigDocListsEveryVariable")
}
