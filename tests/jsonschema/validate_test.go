package jsonschema

import (
	"strings"
	"testing"
)

const testSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["outcome", "n"],
  "additionalProperties": false,
  "properties": {
    "outcome": {"const": "sent"},
    "n": {"type": "integer", "minimum": 0},
    "f": {"type": "number"},
    "ok": {"type": "boolean"},
    "who": {"type": ["string", "null"], "minLength": 1},
    "mode": {"enum": ["a", "b"]},
    "rows": {"type": "array", "items": {"$ref": "#/$defs/row"}},
    "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
  },
  "$defs": {"row": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}}
}`

func TestValidateAcceptsAndRejects(t *testing.T) {
	s, err := Parse([]byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		doc  string
		want string // a fragment of the one expected error; "" for valid
	}{
		{`{"outcome":"sent","n":7,"f":1.5,"ok":true,"who":null,"mode":"a","rows":[{"id":"x"}],"either":3}`, ""},
		{`{"outcome":"sent","n":0,"who":"me","either":"s"}`, ""},
		{`{"outcome":"sent","n":"7"}`, `$.n: "7" is not of type integer`},
		{`{"outcome":"sent","n":1.5}`, `is not of type integer`},
		{`{"outcome":"sent","n":-1}`, `below the minimum`},
		{`{"outcome":"recovered","n":1}`, `is not "sent"`},
		{`{"n":1}`, `required key "outcome" is missing`},
		{`{"outcome":"sent","n":1,"extra":1}`, `key "extra" is not in the schema`},
		{`{"outcome":"sent","n":1,"ok":"false"}`, `is not of type boolean`},
		{`{"outcome":"sent","n":1,"who":""}`, `shorter than 1`},
		{`{"outcome":"sent","n":1,"mode":"c"}`, `is not one of`},
		{`{"outcome":"sent","n":1,"rows":[{}]}`, `$.rows[0]: required key "id"`},
		{`{"outcome":"sent","n":1,"either":true}`, `matches 0 of oneOf's 2`},
		{`[]`, `is not of type object`},
	} {
		v, err := Decode([]byte(c.doc))
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		errs := s.Validate(v)
		switch {
		case c.want == "" && len(errs) > 0:
			t.Errorf("%s: unexpected errors %v", c.doc, errs)
		case c.want != "" && (len(errs) != 1 || !strings.Contains(errs[0], c.want)):
			t.Errorf("%s: errors %v, want one containing %q", c.doc, errs, c.want)
		}
	}
}

func TestParseRefusesKeywordsOutsideTheSubset(t *testing.T) {
	for _, doc := range []string{
		`{"type":"string","pattern":"^a"}`,
		`{"properties":{"x":{"anyOf":[{"type":"string"}]}}}`,
		`{"properties":{"x":3}}`,
		`{"enum":[]}`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("Parse(%s) accepted it", doc)
		}
	}
	if _, err := Parse([]byte(`{"$ref":"#/$defs/nope"}`)); err != nil {
		t.Fatal(err)
	}
	s, _ := Parse([]byte(`{"$ref":"#/$defs/nope"}`))
	if errs := s.Validate("x"); len(errs) != 1 || !strings.Contains(errs[0], "names no definition") {
		t.Errorf("dangling $ref: %v", errs)
	}
}
