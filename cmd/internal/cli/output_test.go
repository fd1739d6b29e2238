package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"fmctl/cmd/internal/fault"
)

// Every field --json may select is a key its schema allows, and every key
// a schema allows may be selected: the table and docs/schema are one fact.
func TestOutputFieldsMatchTheSchemas(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "docs", "schema", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no schemas: %v", err)
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		if name == "error" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(data, &schema); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want := schemaKeys(schema)
		got := append([]string{}, OutputFields[name]...)
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("OutputFields[%q] = %v, schema %s allows %v", name, got, p, want)
		}
	}
	if len(OutputFields) != len(paths)-1 {
		t.Errorf("OutputFields has %d outcomes, docs/schema %d", len(OutputFields), len(paths)-1)
	}
}

func schemaKeys(s map[string]any) []string {
	var keys []string
	if props, ok := s["properties"].(map[string]any); ok {
		for k := range props {
			keys = append(keys, k)
		}
	}
	for _, alt := range []string{"oneOf", "anyOf"} {
		list, _ := s[alt].([]any)
		for _, sub := range list {
			for _, k := range schemaKeys(sub.(map[string]any)) {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	return keys
}

func TestSplitOutputArgs(t *testing.T) {
	for _, c := range []struct {
		line, rest, fields string
		jq                 bool
		err                string
	}{
		{line: "fm-control status t1 --json", rest: "fm-control status t1 --json"},
		{line: "fm-control status --json t1", rest: "fm-control status --json t1"},
		{line: "fm-control status t1 --json state,activity", rest: "fm-control status t1 --json", fields: "state,activity"},
		{line: "fm-control status t1 --json state", rest: "fm-control status t1 --json", fields: "state"},
		{line: "fm-control status t1 --json=state", rest: "fm-control status t1 --json", fields: "state"},
		{line: "fm-control status t1 --json=true", rest: "fm-control status t1 --json=true"},
		{line: "fm-control --json relaunch t1 --note x", rest: "fm-control --json relaunch t1 --note x"},
		{line: "fm-control status t1 --jq .state", rest: "fm-control status t1 --json", jq: true},
		{line: "fm-control status t1 --jq=.state --json id", rest: "fm-control status t1 --json --json", fields: "id", jq: true},
		{line: "fm-send t1 -- --json a,b", rest: "fm-send t1 -- --json a,b"},
		{line: "fm-send t1 --json hello", rest: "fm-send t1 --json hello"},
		{line: "fm-control status t1 --json stat,activity", err: "fm-control status --json has no field 'stat'; did you mean state?"},
		// a bare word nearly a field is a mistyped field, refused with the
		// field meant; a word far from every field stays the command's
		{line: "fm-control status t1 --json stat", err: "fm-control status --json has no field 'stat'; did you mean state?"},
		{line: "fm-control status --json stat t1", err: "did you mean state?"},
		{line: "fm-send t1 --json fix the tests", rest: "fm-send t1 --json fix the tests"},
		{line: "fm-control status --json t12", rest: "fm-control status --json t12"},
		{line: "fm-control list --json=Tasks", err: "not a field list"},
		{line: "fm-control status t1 --jq .[", err: "--jq '.[' is not a jq expression"},
		{line: "fm-control status t1 --jq", err: "--jq needs a jq expression"},
		{line: "fm-control status t1 --jq .a --jq .b", err: "more than once"},
	} {
		rest, out, err := SplitOutputArgs(strings.Fields(c.line))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || Code(err) != CodeUsage {
				t.Errorf("%s: err %v (exit %d), want a usage error containing %q", c.line, err, Code(err), c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		if got := strings.Join(rest, " "); got != c.rest {
			t.Errorf("%s: rest %q, want %q", c.line, got, c.rest)
		}
		if got := strings.Join(out.Fields, ","); got != c.fields || (out.jq != nil) != c.jq {
			t.Errorf("%s: fields %q jq %v, want %q %v", c.line, got, out.jq != nil, c.fields, c.jq)
		}
	}
}

func TestEmitSelectsFieldsAndFilters(t *testing.T) {
	o := Outcome{Word: "status", ID: "t1"}
	o.Add("state", "alive").Put(fault.Int("events_refused", 2)).Add("activity", "idle").Add("note", "a\nb")
	for _, c := range []struct{ line, want string }{
		{"fm-control status t1 --json", `{"outcome":"status","id":"t1","state":"alive","events_refused":2,"activity":"idle","note":"a\nb"}` + "\n"},
		{"fm-control status t1 --json activity,id", `{"id":"t1","activity":"idle"}` + "\n"},
		{"fm-control status t1 --json rollback,state", `{"state":"alive","rollback":null}` + "\n"},
		{"fm-control status t1 --jq .state", "alive\n"},
		{"fm-control status t1 --jq .events_refused+1", "3\n"},
		{"fm-control status t1 --jq {a:.activity}", `{"a":"idle"}` + "\n"},
		{"fm-control status t1 --jq .state,.activity", "alive\nidle\n"},
		{"fm-control status t1 --json id --jq keys", `["id"]` + "\n"},
		{"fm-control status t1 --jq .note,[.id]", "a\nb\n[\"t1\"]\n"},
		{"fm-control status t1 --jq empty", ""},
		{"fm-control status t1 --jq {a:\"<x>\"}", `{"a":"<x>"}` + "\n"},
	} {
		_, out, err := SplitOutputArgs(strings.Fields(c.line))
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		var buf bytes.Buffer
		Printer{Out: &buf, JSON: true, Output: &out}.Outcome(o)
		if buf.String() != c.want || out.Err() != nil {
			t.Errorf("%s: printed %q (err %v), want %q", c.line, buf.String(), out.Err(), c.want)
		}
	}
	// A jq runtime error ends the filter there and is the run's usage
	// error; what it printed before stays printed.
	_, out, _ := SplitOutputArgs([]string{"fm-control", "status", "--jq", `.state, error("no")`})
	var buf bytes.Buffer
	Printer{Out: &buf, JSON: true, Output: &out}.Outcome(o)
	if buf.String() != "alive\n" || out.Err() == nil || Code(out.Err()) != CodeUsage || out.Err().Error() != "--jq: error: no" {
		t.Errorf("jq error: printed %q, err %v", buf.String(), out.Err())
	}
}

// A filter that never ends is stopped by its bound, not waited on.
func TestRunJQStopsAFilterThatDoesNotEnd(t *testing.T) {
	code, err := compileJQ("last(range(1e15))")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := runJQ(ctx, code, map[string]any{}); err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("after %s: %v, want the run stopped", time.Since(start), err)
	}
}

// fieldList is hand-written so that nothing compiles a regexp at start-up;
// it must accept exactly what the regexp did.
func TestFieldListAgreesWithRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[a-z_]+(,[a-z_]+)*$`)
	for _, s := range []string{"", ",", "a", "a,b", "a,,b", "a,", ",a", "id,state", "ID", "a-b", "a b", "_", "a_b,c_d", "a,b\n", "é", "t1"} {
		if got, want := fieldList(s), re.MatchString(s); got != want {
			t.Errorf("fieldList(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}
