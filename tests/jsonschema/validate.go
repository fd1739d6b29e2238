// Package jsonschema validates JSON values against the subset of JSON Schema
// (draft 2020-12) that docs/schema uses: type (null, boolean, integer,
// number, string, array, object), properties, required,
// additionalProperties, enum, const, items, oneOf, minimum, minLength and
// $ref to the document's own $defs. A keyword outside the subset is an
// error, so a schema never silently checks less than it says.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
)

// Schema is one parsed schema document.
type Schema struct {
	root map[string]any
}

var known = map[string]bool{
	"$schema": true, "$id": true, "$defs": true, "$ref": true, "$comment": true, "title": true, "description": true,
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"enum": true, "const": true, "items": true, "oneOf": true, "minimum": true, "minLength": true,
}

// Load reads a schema file.
func Load(path string) (*Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse reads a schema document, refusing keywords outside the subset.
func Parse(data []byte) (*Schema, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a schema must be an object")
	}
	if err := checkKeywords(root, "#"); err != nil {
		return nil, err
	}
	return &Schema{root: root}, nil
}

// Decode reads one JSON value, keeping numbers as json.Number so an integer
// is told from 1.5.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

func checkKeywords(s map[string]any, at string) error {
	for k, v := range s {
		if !known[k] {
			return fmt.Errorf("%s: keyword %q is outside the supported subset", at, k)
		}
		var err error
		switch k {
		case "properties", "$defs":
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s/%s must be an object", at, k)
			}
			for name, sub := range m {
				if err = checkSub(sub, at+"/"+k+"/"+name); err != nil {
					break
				}
			}
		case "items", "additionalProperties":
			err = checkSub(v, at+"/"+k)
		case "oneOf", "enum", "required":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				return fmt.Errorf("%s/%s must be a non-empty array", at, k)
			}
			for i, sub := range list {
				if k == "oneOf" {
					if err = checkSub(sub, fmt.Sprintf("%s/oneOf/%d", at, i)); err != nil {
						break
					}
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func checkSub(v any, at string) error {
	switch s := v.(type) {
	case bool:
		return nil
	case map[string]any:
		return checkKeywords(s, at)
	}
	return fmt.Errorf("%s: a schema must be an object or a boolean", at)
}

// Validate checks v (as Decode returns it) and lists every violation.
func (s *Schema) Validate(v any) []string {
	var errs []string
	s.validate(s.root, v, "$", &errs)
	return errs
}

func (s *Schema) validate(node any, v any, at string, errs *[]string) {
	switch n := node.(type) {
	case bool:
		if !n {
			*errs = append(*errs, at+": no value is allowed here")
		}
		return
	case map[string]any:
		s.validateObject(n, v, at, errs)
	}
}

func (s *Schema) validateObject(n map[string]any, v any, at string, errs *[]string) {
	if ref, ok := n["$ref"].(string); ok {
		target, err := s.resolve(ref)
		if err != nil {
			*errs = append(*errs, at+": "+err.Error())
			return
		}
		s.validate(target, v, at, errs)
	}
	if t, ok := n["type"]; ok && !typeMatches(t, v) {
		*errs = append(*errs, fmt.Sprintf("%s: %s is not of type %v", at, show(v), t))
		return
	}
	if c, ok := n["const"]; ok && !equal(c, v) {
		*errs = append(*errs, fmt.Sprintf("%s: %s is not %s", at, show(v), show(c)))
	}
	if e, ok := n["enum"].([]any); ok && !inEnum(e, v) {
		*errs = append(*errs, fmt.Sprintf("%s: %s is not one of %s", at, show(v), show(e)))
	}
	if m, ok := n["minimum"].(json.Number); ok {
		if num, isNum := v.(json.Number); isNum {
			lo, _ := m.Float64()
			if f, _ := num.Float64(); f < lo {
				*errs = append(*errs, fmt.Sprintf("%s: %s is below the minimum %s", at, num, m))
			}
		}
	}
	if m, ok := n["minLength"].(json.Number); ok {
		if str, isStr := v.(string); isStr {
			if lo, _ := m.Int64(); int64(len([]rune(str))) < lo {
				*errs = append(*errs, fmt.Sprintf("%s: %q is shorter than %s", at, str, m))
			}
		}
	}
	if one, ok := n["oneOf"].([]any); ok {
		s.validateOneOf(one, v, at, errs)
	}
	if items, ok := n["items"]; ok {
		if arr, isArr := v.([]any); isArr {
			for i, e := range arr {
				s.validate(items, e, fmt.Sprintf("%s[%d]", at, i), errs)
			}
		}
	}
	if obj, isObj := v.(map[string]any); isObj {
		s.validateProperties(n, obj, at, errs)
	}
}

func (s *Schema) validateOneOf(one []any, v any, at string, errs *[]string) {
	matched := 0
	var why []string
	for i, sub := range one {
		var e []string
		s.validate(sub, v, at, &e)
		if len(e) == 0 {
			matched++
		} else {
			why = append(why, fmt.Sprintf("[%d] %s", i, strings.Join(e, "; ")))
		}
	}
	if matched != 1 {
		*errs = append(*errs, fmt.Sprintf("%s: matches %d of oneOf's %d schemas, want exactly 1 (%s)", at, matched, len(one), strings.Join(why, " | ")))
	}
}

func (s *Schema) validateProperties(n map[string]any, obj map[string]any, at string, errs *[]string) {
	props, _ := n["properties"].(map[string]any)
	if req, ok := n["required"].([]any); ok {
		for _, r := range req {
			if _, has := obj[r.(string)]; !has {
				*errs = append(*errs, fmt.Sprintf("%s: required key %q is missing", at, r))
			}
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if sub, ok := props[k]; ok {
			s.validate(sub, obj[k], at+"."+k, errs)
		} else if extra, ok := n["additionalProperties"]; ok {
			if b, isBool := extra.(bool); isBool && !b {
				*errs = append(*errs, fmt.Sprintf("%s: key %q is not in the schema", at, k))
				continue
			}
			s.validate(extra, obj[k], at+"."+k, errs)
		}
	}
}

func (s *Schema) resolve(ref string) (any, error) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		return nil, fmt.Errorf("$ref %q: only #/$defs/<name> is supported", ref)
	}
	defs, _ := s.root["$defs"].(map[string]any)
	target, ok := defs[name]
	if !ok {
		return nil, fmt.Errorf("$ref %q names no definition", ref)
	}
	return target, nil
}

func typeMatches(t any, v any) bool {
	switch tt := t.(type) {
	case string:
		return isType(tt, v)
	case []any:
		for _, one := range tt {
			if s, ok := one.(string); ok && isType(s, v) {
				return true
			}
		}
	}
	return false
}

func isType(t string, v any) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}

func inEnum(e []any, v any) bool {
	for _, x := range e {
		if equal(x, v) {
			return true
		}
	}
	return false
}

// equal compares decoded values; numbers by value, so 1 equals 1.0.
func equal(a, b any) bool {
	na, aNum := a.(json.Number)
	nb, bNum := b.(json.Number)
	if aNum && bNum {
		fa, _ := na.Float64()
		fb, _ := nb.Float64()
		return fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}
