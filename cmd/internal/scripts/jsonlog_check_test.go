package scripts

import (
	"strings"
	"testing"
)

// The schema check must be able to fail: each bad run below is caught.
func TestCheckRunCatchesOutputOffItsSchema(t *testing.T) {
	errObj := `{"error":"no task 't9'","code":"no-such-task","exit":1}`
	for _, c := range []struct {
		name string
		run  jsonRun
		want string // "" for a valid run
	}{
		{"valid outcome", jsonRun{Args: []string{"fm-control", "wait", "t1", "--json"},
			Stdout: `{"outcome":"reached","id":"t1","for":"dead","state":"dead","activity":"dead","evidence":"endpoint","waited_ms":3}` + "\n"}, ""},
		{"valid error and a notice", jsonRun{Args: []string{"fm-send", "--json", "t9", "hi"}, Exit: 1,
			Stderr: "notice: something\n" + errObj + "\n"}, ""},
		{"a string count", jsonRun{Args: []string{"fm-control", "wait", "t1", "--json"},
			Stdout: `{"outcome":"reached","id":"t1","for":"dead","state":"dead","activity":"dead","evidence":"endpoint","waited_ms":"3"}`}, `got string, want integer`},
		{"text where JSON was asked", jsonRun{Args: []string{"fm-control", "wait", "t1", "--json"},
			Stdout: "reached t1 for=dead\n"}, "stdout is not JSON"},
		{"a verb with no schema", jsonRun{Args: []string{"fm-control", "frobnicate", "t1", "--json"},
			Stdout: `{"outcome":"frobbed"}`}, "no schema"},
		{"a text error", jsonRun{Args: []string{"fm-send", "--json", "t9", "hi"}, Exit: 1,
			Stderr: "error: no task\n"}, "neither a notice nor a JSON error object"},
		{"a failure without its error", jsonRun{Args: []string{"fm-send", "--json", "t9", "hi"}, Exit: 1}, "printed 0"},
		{"an error with a success", jsonRun{Args: []string{"fm-send", "--json", "t9", "hi"}, Stderr: errObj}, "exit 0, yet"},
		{"the wrong exit", jsonRun{Args: []string{"fm-send", "--json", "t9", "hi"}, Exit: 2, Stderr: errObj}, "says exit 1"},
		{"an unknown code", jsonRun{Args: []string{"fm-send", "--json", "t9", "hi"}, Exit: 1,
			Stderr: `{"error":"x","code":"","exit":1}`}, `/code: value must be one of`},
	} {
		errs := checkRun(c.run)
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		joined := strings.Join(got, "\n")
		switch {
		case c.want == "" && len(errs) > 0:
			t.Errorf("%s: unexpected errors:\n%s", c.name, joined)
		case c.want != "" && !strings.Contains(joined, c.want):
			t.Errorf("%s: errors %q, want one containing %q", c.name, joined, c.want)
		}
	}
}

func TestOutcomeSchemaIsTheBinaryOrTheControlVerb(t *testing.T) {
	for args, want := range map[string]string{
		"fm-send --json t1 hi":            "fm-send",
		"fm-spawn t1 --harness claude":    "fm-spawn",
		"fm-control --json status t1":     "fm-control-status",
		"fm-control relaunch t1 --note x": "fm-control-relaunch",
		"/x/bin/fm-control list --json":   "fm-control-list",
	} {
		if got := outcomeSchema(strings.Fields(args)); got != want {
			t.Errorf("outcomeSchema(%s) = %s, want %s", args, got, want)
		}
	}
}
