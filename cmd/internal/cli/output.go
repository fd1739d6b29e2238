package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/itchyny/gojq"

	"fmctl/cmd/internal/fault"
	"fmctl/phrase"
)

// OutputFields are the top-level keys of each JSON outcome, by the name of
// its schema in docs/schema (the binary, or fm-control-<verb>): what
// `--json a,b` may select. They are checked before the verb acts, so a
// mistyped field changes nothing. TestOutputFieldsMatchTheSchemas keeps
// this table and the schemas the same.
var OutputFields = map[string][]string{
	"fm-send":                 {"outcome", "id", "backend", "endpoint", "bytes", "enters", "marked", "submit", "proof", "message", "cleared", "discarded", "released", "key", "clear"},
	"fm-spawn":                {"outcome", "id", "harness", "kind", "backend", "window", "worktree", "ready", "dialog", "relaunch", "attach"},
	"fm-control-capabilities": {"verbs", "harnesses", "backends", "family_rule", "efforts", "keys", "refused", "tunables"},
	"fm-control-exit":         {"outcome", "id", "harness", "backend", "endpoint", "worktree", "untaken", "left"},
	"fm-control-interrupt":    {"outcome", "id", "harness", "backend", "verified", "cancel", "proof", "endpoint", "state", "rounds", "cleared", "queue", "activity", "flushed", "dropped", "dropped_to", "untaken"},
	"fm-control-list":         {"outcome", "count", "tasks"},
	"fm-control-read":         {"outcome", "id", "backend", "endpoint", "lines", "text", "harness", "kind", "at", "message", "tool", "end", "cut"},
	"fm-control-rebind":       {"outcome", "id", "backend", "endpoint", "was", "pane", "state", "worktree", "detail"},
	"fm-control-recover":      {"outcome", "id", "phase", "result", "rollback", "agent", "harness", "ready", "spawn", "window", "journal", "endpoint", "worktree", "branch", "archive"},
	"fm-control-relaunch":     {"outcome", "id", "harness", "from", "model", "effort", "backend", "endpoint", "worktree", "ready", "phase", "left"},
	"fm-control-status":       {"outcome", "id", "harness", "recorded_harness", "kind", "backend", "endpoint", "worktree", "model", "effort", "permissions", "state", "server", "classifier", "agent_status", "activity", "waiting_for", "evidence", "attention", "stalled_for_s", "turn", "turn_error", "events_refused", "journal", "rollback", "detail"},
	"fm-teardown":             {"outcome", "id", "harness", "kind", "agent", "endpoint", "worktree", "branch", "archive", "discarded"},
	"fm-control-wait":         {"outcome", "id", "for", "message", "proof", "state", "activity", "waiting_for", "evidence", "waited_ms"},
}

// Output is what a command line asks of its JSON outcome beyond --json:
// only some fields (`--json a,b`, as gh's), or a jq filter (`--jq EXPR`).
// Errors on stderr are never filtered: a script reads their code.
type Output struct {
	Fields []string
	// jq is the --jq expression, compiled as the command line is read: a
	// bad one is a usage error before the verb acts.
	jq *gojq.Code
	// failed is the first filter error met while printing (a jq runtime
	// error): Run reports it once the verb returns.
	failed error
}

// Filtering reports whether the outcome is reshaped before printing.
func (o *Output) Filtering() bool { return o != nil && (len(o.Fields) > 0 || o.jq != nil) }

// fieldList reports whether s is a word `--json` may take as its value:
// field names ([a-z_]+) joined by commas. Checked by hand, not by a regexp
// compiled at start-up, which every invocation would pay for.
func fieldList(s string) bool {
	for _, f := range strings.Split(s, ",") {
		if f == "" || strings.Trim(f, "abcdefghijklmnopqrstuvwxyz_") != "" {
			return false
		}
	}
	return true
}

// namesFields reports whether the word after a bare --json asks for
// fields: field names joined by commas, one of the outcome's fields, or a
// word that is nearly one (`--json stat`), which addFields then refuses
// with the field meant. Any other word is the command's own (`--json t1`,
// `--json hello`): a message or an id is never taken unless it reads as a
// field name of that very outcome.
func namesFields(w string, known []string) bool {
	if !fieldList(w) {
		return false
	}
	return strings.Contains(w, ",") || slices.Contains(known, w) || phrase.Nearest(w, known) != ""
}

// SplitOutputArgs reads the output selection off a command line (args[0]
// is the program) before urfave parses it, and returns the line with plain
// --json in its place. `--json=FIELDS` always names fields; the word after
// a bare `--json` does when namesFields says so, and is otherwise the
// command's own word (`--json t1`), as it always was. `--jq EXPR` implies --json. Words after "--" are text.
func SplitOutputArgs(args []string) ([]string, Output, error) {
	var out Output
	known := OutputFields[schemaName(args)]
	rest := append([]string{}, args[:min(1, len(args))]...)
	jqGiven := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(rest, args[i:]...), out, nil
		case a == "--json" || a == "-json":
			rest = append(rest, "--json")
			if i+1 < len(args) && namesFields(args[i+1], known) {
				i++
				if err := out.addFields(args[i], args, known); err != nil {
					return nil, out, err
				}
			}
			continue
		case strings.HasPrefix(a, "--json=") && !isBoolWord(strings.TrimPrefix(a, "--json=")):
			rest = append(rest, "--json")
			if err := out.addFields(strings.TrimPrefix(a, "--json="), args, known); err != nil {
				return nil, out, err
			}
			continue
		case a == "--jq" || strings.HasPrefix(a, "--jq="):
			expr, ok := strings.CutPrefix(a, "--jq=")
			if !ok {
				if i+1 >= len(args) {
					return nil, out, fault.Usage("--jq needs a jq expression, such as --jq .id")
				}
				i++
				expr = args[i]
			}
			if jqGiven {
				return nil, out, fault.Usage("--jq is given more than once; pass it once")
			}
			jqGiven = true
			code, err := compileJQ(expr)
			if err != nil {
				return nil, out, err
			}
			out.jq = code
			rest = append(rest, "--json")
			continue
		}
		rest = append(rest, a)
	}
	return rest, out, nil
}

func isBoolWord(v string) bool { return v == "true" || v == "false" }

// addFields checks a field list against the outcome's fields; an unknown
// one is a usage error naming those there are.
func (o *Output) addFields(list string, args []string, known []string) error {
	if !fieldList(list) {
		return fault.Usage("--json '%s' is not a field list: give field names joined by commas, such as --json id,state", phrase.Printable(list))
	}
	for _, f := range strings.Split(list, ",") {
		if known != nil && !slices.Contains(known, f) {
			return fault.Usage("%s --json has no field '%s'%s", commandName(args), f, phrase.DidYouMean(f, known)).
				Hint("its fields: %s", strings.Join(known, ", "))
		}
		if !slices.Contains(o.Fields, f) {
			o.Fields = append(o.Fields, f)
		}
	}
	return nil
}

// compileJQ parses and compiles a --jq expression; a bad one is a usage
// error.
func compileJQ(expr string) (*gojq.Code, error) {
	q, err := gojq.Parse(expr)
	if err == nil {
		var code *gojq.Code
		if code, err = gojq.Compile(q); err == nil {
			return code, nil
		}
	}
	return nil, fault.Usage("--jq '%s' is not a jq expression: %v", phrase.Printable(expr), err)
}

// schemaName names the outcome a command line asks for, as docs/schema
// does: the binary's, or for fm-control its verb's.
func schemaName(args []string) string {
	if len(args) == 0 {
		return ""
	}
	bin := filepath.Base(args[0])
	if bin != "fm-control" {
		return bin
	}
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if _, ok := OutputFields[bin+"-"+a]; ok {
			return bin + "-" + a
		}
	}
	return bin
}

func commandName(args []string) string {
	return strings.Replace(schemaName(args), "fm-control-", "fm-control ", 1)
}

// emit writes v, one JSON value, as the output selection asks: as it is
// (one line), only the chosen fields (in the outcome's own order; a field
// the outcome lacks is null), or each result of the jq filter on a line, a
// string as raw text (as gh's and jq -r's).
func (o *Output) emit(w io.Writer, v any) {
	raw, err := MarshalValue(v)
	if err != nil || !o.Filtering() {
		w.Write(append(raw, '\n'))
		return
	}
	if len(o.Fields) > 0 {
		if raw, err = selectFields(raw, o.Fields); err != nil {
			o.fail(err)
			return
		}
	}
	if o.jq == nil {
		w.Write(append(raw, '\n'))
		return
	}
	var in any
	if err := json.Unmarshal(raw, &in); err != nil {
		o.fail(err)
		return
	}
	out, err := runJQ(context.Background(), o.jq, in)
	w.Write(out)
	if err != nil {
		o.fail(err)
	}
}

// A filter may not end (`repeat(1)`, `last(range(1e15))`): one outcome's
// filtering is stopped after jqRunLimit, or once it printed jqMaxOutput.
const (
	jqRunLimit  = 10 * time.Second
	jqMaxOutput = 64 << 20
)

// runJQ is each result of the filter on v on a line, a string as raw text
// (as gh's --jq and jq -r print), and the error that ended it, if one did.
func runJQ(ctx context.Context, code *gojq.Code, v any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, jqRunLimit)
	defer cancel()
	var buf bytes.Buffer
	iter := code.RunWithContext(ctx, v)
	for {
		r, ok := iter.Next()
		if !ok {
			return buf.Bytes(), nil
		}
		if err, isErr := r.(error); isErr {
			if ctx.Err() != nil {
				return buf.Bytes(), fmt.Errorf("--jq: the filter did not finish within %s", jqRunLimit)
			}
			return buf.Bytes(), fmt.Errorf("--jq: %w", err)
		}
		if s, isStr := r.(string); isStr {
			buf.WriteString(s)
		} else if b, err := MarshalValue(r); err != nil {
			return buf.Bytes(), fmt.Errorf("--jq: %w", err)
		} else {
			buf.Write(b)
		}
		buf.WriteByte('\n')
		if buf.Len() > jqMaxOutput {
			return nil, fmt.Errorf("--jq: the filter printed more than %d MiB for one value", jqMaxOutput>>20)
		}
	}
}

// fail keeps the first filter error, as the command line's (a usage
// error).
func (o *Output) fail(err error) {
	if o.failed == nil {
		o.failed = fault.Usage("%v", err)
	}
}

// Err is the first filter error met while printing, as a usage error.
func (o *Output) Err() error {
	if o == nil {
		return nil
	}
	return o.failed
}

// selectFields keeps the named top-level keys of a JSON object, in the
// object's order; a named key it lacks is null.
func selectFields(raw []byte, fields []string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("--json fields: the outcome is not an object")
	}
	var obj object
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if k := t.(string); slices.Contains(fields, k) {
			obj = append(obj, field{k, v})
			seen[k] = true
		}
	}
	for _, f := range fields {
		if !seen[f] {
			obj = append(obj, field{f, nil})
		}
	}
	return obj.MarshalJSON()
}
