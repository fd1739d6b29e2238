package docpaths

import (
	"reflect"
	"regexp"
	"slices"
	"testing"

	"fmctl/config"
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
