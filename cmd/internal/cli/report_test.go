package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmctl/cmd/internal/fault"
	"fmctl/state"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLineKeepsContractTokensAndHidesJSONOnlyFacts(t *testing.T) {
	o := Outcome{Word: "interrupt-delivered", ID: "t1"}
	o.Add("harness", "claude").AddJSON("endpoint", "s:fm-t1").Add("cancel", "unconfirmed")
	if got, want := o.Line(), "interrupt-delivered t1 harness=claude cancel=unconfirmed"; got != want {
		t.Fatalf("Line() = %q, want %q", got, want)
	}
	if got, want := jsonOf(t, o.JSON()), `{"outcome":"interrupt-delivered","id":"t1","harness":"claude","endpoint":"s:fm-t1","cancel":"unconfirmed"}`; got != want {
		t.Fatalf("JSON() = %s, want %s", got, want)
	}
}

func TestTypedFactsKeepTheTextLineAndTypeTheJSON(t *testing.T) {
	o := Outcome{Word: "sent", ID: "t1"}
	o.Put(fault.Int("bytes", 7), fault.Bool("marked", false), fault.Yes("cleared"), fault.OrNull("busy", "", "none"),
		fault.Str("result", "completed").TokenAs("outcome"), fault.Str("pane", "<%1> & more"))
	if got, want := o.Line(), "sent t1 bytes=7 marked=false cleared=yes busy=none outcome=completed pane=\"<%1> & more\""; got != want {
		t.Fatalf("Line() = %q, want %q", got, want)
	}
	want := `{"outcome":"sent","id":"t1","bytes":7,"marked":false,"cleared":true,"busy":null,"result":"completed","pane":"<%1> & more"}`
	if got := jsonOf(t, o.JSON()); got != want {
		t.Fatalf("JSON() = %s, want %s", got, want)
	}
	if o.Get("bytes") != "7" || o.Get("outcome") != "" {
		t.Fatalf("Get reads the text value by JSON key: bytes=%q outcome=%q", o.Get("bytes"), o.Get("outcome"))
	}
}

// A value a script could not split off at the next space is quoted, Go
// style; a plain word (a path, an endpoint, a pane id) is not.
func TestTextValueQuotesWhatASpaceWouldSplit(t *testing.T) {
	for v, want := range map[string]string{
		"":            "",
		"claude":      "claude",
		"fmses:fm-t1": "fmses:fm-t1",
		"/tmp/wt (x)": `"/tmp/wt (x)"`,
		"1 uncommitted or untracked path(s) (?? notes.txt)": `"1 uncommitted or untracked path(s) (?? notes.txt)"`,
		`say "hi"`:  `"say \"hi\""`,
		`a\b`:       `"a\\b"`,
		"tab\there": `"tab\there"`,
		"bell\x07":  `"bell\a"`,
		`"`:         `"\""`,
	} {
		if got := TextValue(v); got != want {
			t.Errorf("TextValue(%q) = %s, want %s", v, got, want)
		}
	}
}

// A fact can never overwrite the object's own fields: recover once printed
// "outcome":"completed" over "outcome":"recovered".
func TestAFactCannotTakeAReservedKey(t *testing.T) {
	for _, key := range []string{"outcome", "id", "error", "code", "exit"} {
		mustPanic(t, "Outcome.Add "+key, func() { new(Outcome).Add(key, "x") })
		mustPanic(t, "Outcome.Put "+key, func() { new(Outcome).Put(fault.Int(key, 1)) })
	}
	for _, key := range []string{"outcome", "error", "code", "exit"} {
		mustPanic(t, "Error.With "+key, func() { fault.Failed("x").With(key, "y") })
		mustPanic(t, "Error.Put "+key, func() { fault.Failed("x").Put(fault.Yes(key)) })
	}
	mustPanic(t, "a key given twice", func() { new(Outcome).Add("state", "alive").AddJSON("state", "dead") })
	mustPanic(t, "an error fact given twice", func() { fault.Failed("x").With("id", "t1").Put(fault.Str("id", "t2")) })
	// An error may name the task it is about.
	if e := fault.Failed("x").With("id", "t1"); e.Get("id") != "t1" {
		t.Fatalf("error fact id = %q", e.Get("id"))
	}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func jsonOf(t *testing.T, m json.Marshaler) string {
	t.Helper()
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("invalid JSON %s", b)
	}
	return string(b)
}

func TestErrorFormsAndCodes(t *testing.T) {
	var out, errOut bytes.Buffer
	p := Printer{Out: &out, Err: &errOut}
	if code := p.Error(fault.Usage("bad verb")); code != 2 || errOut.String() != "error: bad verb\n" {
		t.Fatalf("text error: code %d, %q", code, errOut.String())
	}
	errOut.Reset()
	p.JSON = true
	if code := p.Error(fault.Unconfirmed("maybe").With("submit", "unconfirmed").Put(fault.Int("enters", 2))); code != 3 ||
		errOut.String() != `{"error":"maybe","code":"unconfirmed","exit":3,"submit":"unconfirmed","enters":2}`+"\n" {
		t.Fatalf("json error: code %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := p.Error(errors.New("plain")); code != 1 || errOut.String() != `{"error":"plain","code":"refused","exit":1}`+"\n" {
		t.Fatalf("plain error: code %d, %q", code, errOut.String())
	}
	if out.Len() != 0 {
		t.Fatalf("errors wrote to stdout: %q", out.String())
	}
}

func TestWaitingDrawsOnlyOnATerminal(t *testing.T) {
	var plain bytes.Buffer
	Printer{Err: &plain}.Waiting("waiting for t1", time.Now().Add(time.Second))()
	if plain.Len() != 0 {
		t.Fatalf("non-terminal progress wrote %q", plain.String())
	}
	var tty bytes.Buffer
	stop := Printer{Err: &tty, TTY: true}.Waiting("waiting for t1's agent to be dead", time.Now().Add(5*time.Second))
	time.Sleep(30 * time.Millisecond)
	stop()
	if !strings.Contains(tty.String(), "waiting for t1's agent to be dead (5s left)") || !strings.HasSuffix(tty.String(), "\r\x1b[2K") {
		t.Fatalf("terminal progress = %q", tty.String())
	}
	var jsonTTY bytes.Buffer
	Printer{Err: &jsonTTY, TTY: true, JSON: true}.Waiting("x", time.Now().Add(time.Second))()
	if jsonTTY.Len() != 0 {
		t.Fatalf("--json progress wrote %q", jsonTTY.String())
	}
}

func TestHintsFollowTheErrorLineAndCloseTheJSON(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", fault.Failed("the agent for t1 could not be launched").Coded(fault.ELaunchFailed).
		Put(fault.Fact{Key: "pane", Value: []string{"bash: claude: command not found"}}).Hint("pin the binary in config/fm.toml"))
	var text, js bytes.Buffer
	if code := (Printer{Err: &text}).Error(err); code != CodeFailed {
		t.Fatalf("exit %d", code)
	}
	if got, want := text.String(), "error: wrapped: the agent for t1 could not be launched\nhint: pin the binary in config/fm.toml\n"; got != want {
		t.Fatalf("text = %q, want %q", got, want)
	}
	(Printer{Err: &js, JSON: true}).Error(err)
	if got, want := js.String(), `{"error":"wrapped: the agent for t1 could not be launched","code":"launch-failed","exit":1,"pane":["bash: claude: command not found"],"hints":["pin the binary in config/fm.toml"]}`+"\n"; got != want {
		t.Fatalf("JSON = %s, want %s", got, want)
	}
}

// A record's or a home's error carries its own next steps below the
// refusal that wraps it; each hint is printed once, the refusal's first.
func TestHintsComeFromTheWholeChainOnce(t *testing.T) {
	inner := state.WithHints(state.Errorf(state.ErrNoSuchTask, "no task 't9' in /home/state"), "start a task with fm-spawn t9", "fm-control list shows the tasks")
	err := fault.Failed("%w", inner).Hint("fm-control list shows the tasks").Hint("check the id")
	var text bytes.Buffer
	(Printer{Err: &text}).Error(err)
	want := "error: no task 't9' in /home/state\nhint: fm-control list shows the tasks\nhint: check the id\nhint: start a task with fm-spawn t9\n"
	if got := text.String(); got != want {
		t.Fatalf("text = %q, want %q", got, want)
	}
	if got := fault.CodeOf(err); got != fault.ENoSuchTask {
		t.Fatalf("code = %s, want %s", got, fault.ENoSuchTask)
	}
}
