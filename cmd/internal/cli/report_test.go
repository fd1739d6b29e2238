package cli

import (
	"bytes"
	"errors"
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
	if m := o.Map(); m["endpoint"] != "s:fm-t1" || m["outcome"] != "interrupt-delivered" || m["id"] != "t1" {
		t.Fatalf("Map() = %v", m)
	}
}

func TestErrorFormsAndCodes(t *testing.T) {
	var out, errOut bytes.Buffer
	p := Printer{Out: &out, Err: &errOut}
	if code := p.Error(Usage("bad verb")); code != 2 || errOut.String() != "error: bad verb\n" {
		t.Fatalf("text error: code %d, %q", code, errOut.String())
	}
	errOut.Reset()
	p.JSON = true
	if code := p.Error(Unconfirmed("maybe").With("submit", "unconfirmed")); code != 3 ||
		errOut.String() != `{"code":3,"error":"maybe","submit":"unconfirmed"}`+"\n" {
		t.Fatalf("json error: code %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := p.Error(errors.New("plain")); code != 1 || !strings.Contains(errOut.String(), `"code":1`) {
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
