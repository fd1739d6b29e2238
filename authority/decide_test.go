package authority

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	must := func(s string) GrantRule {
		g, err := ParseGrant(s)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	plain := Caller{Task: "t2", PanePID: 300}
	granted := Caller{Task: "t2", PanePID: 300, Grants: []GrantRule{must("exit,send@t1"), must("send,exit,spawn@children")}}
	cases := []struct {
		caller       Caller
		verb, target string
		parent       string
		allowed      bool
		why          string
	}{
		{Caller{}, Exit, "t1", "", true, "the operator may do anything"},
		{Caller{}, Grant, "t9", "", true, "the operator grants"},
		{plain, Status, "t2", "", true, "status on itself"},
		{plain, Read, "t2", "", true, "read on itself"},
		{plain, Wait, "t2", "", true, "wait on itself"},
		{plain, List, "t2", "", true, "list shows itself"},
		{plain, AgentEvent, "t2", "", true, "its own hooks"},
		{plain, AgentEvent, "t1", "", false, "another task's events"},
		{plain, Status, "t1", "", false, "another task's status"},
		{plain, Exit, "t2", "", false, "exit itself"},
		{plain, Relaunch, "t2", "", false, "relaunch itself onto another harness"},
		{plain, Send, "t2", "", false, "send to itself"},
		{plain, Recover, "t2", "", false, "recover itself"},
		{plain, Spawn, "t9", "", false, "spawn"},
		{plain, Grant, "t2", "", false, "grant itself"},
		{plain, "no-such-verb", "t2", "", false, "an unknown verb"},
		{granted, Exit, "t1", "", true, "exit@t1"},
		{granted, Send, "t1", "", true, "send@t1"},
		{granted, Interrupt, "t1", "", false, "interrupt was not granted"},
		{granted, Exit, "t3", "", false, "t3 is not t1 nor its child"},
		{granted, Exit, "c1", "t2", true, "exit@children on its child"},
		{granted, Exit, "c1", "t5", false, "another task's child"},
		{granted, Spawn, "c2", "", true, "spawn@children makes a child"},
		{granted, Grant, "c2", "", false, "no grant gives grant"},
	}
	for _, c := range cases {
		err := Decide(Request{Caller: c.caller, Verb: c.verb, Target: c.target, TargetParent: c.parent})
		if (err == nil) != c.allowed {
			t.Errorf("%s: %s %s by %s: err=%v, want allowed=%v", c.why, c.verb, c.target, c.caller, err, c.allowed)
		}
		var r *Refusal
		if err != nil && !errors.As(err, &r) {
			t.Errorf("%s: refusal %T is not a *Refusal", c.why, err)
		}
	}
}

func TestRefusalNamesTheCallerAndWhatItMayDo(t *testing.T) {
	g, _ := ParseGrant("send@children")
	err := Decide(Request{Caller: Caller{Task: "t2", PanePID: 300, Grants: []GrantRule{g}}, Verb: Exit, Target: "t1"})
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("refusal = %v, want a *Refusal", err)
	}
	if r.Caller.Task != "t2" || r.Caller.PanePID != 300 || r.Verb != Exit || r.Target != "t1" {
		t.Errorf("refusal names %+v, want caller t2 (pane pid 300), verb exit, target t1", r.Request)
	}
	if want := []string{"status, read, wait, list, agent-event on itself (t2)", "send on the tasks it spawned"}; !slices.Equal(r.May, want) {
		t.Errorf("refusal's May = %q, want %q", r.May, want)
	}
}

func TestParseGrant(t *testing.T) {
	for in, want := range map[string]string{
		"exit@t1":              "exit@t1",
		"send,exit,send@t1":    "send,exit@t1",
		"read,status@children": "read,status@children",
	} {
		g, err := ParseGrant(in)
		if err != nil || g.String() != want {
			t.Errorf("ParseGrant(%q) = %v, %v; want %s", in, g, err, want)
		}
	}
	for _, bad := range []string{"", "exit", "@t1", "exit@", "grant@t1", "agent-event@t1", "kill@t1", "exit@../t1", "exit@fm t1", "exit@t1@t2"} {
		if g, err := ParseGrant(bad); err == nil {
			t.Errorf("ParseGrant(%q) = %v, want refused", bad, g)
		}
	}
	gs, err := ParseGrants(" exit@t1  read@children ")
	if err != nil || FormatGrants(gs) != "exit@t1 read@children" {
		t.Errorf("ParseGrants = %v, %v", gs, err)
	}
	if _, err := ParseGrants("exit@t1 bogus"); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("ParseGrants of a bad rule = %v, want it named", err)
	}
}

func TestAudited(t *testing.T) {
	for _, c := range []struct {
		verb    string
		allowed bool
		want    bool
	}{
		{Exit, true, true}, {Send, true, true}, {Spawn, true, true},
		{Status, true, false}, {AgentEvent, true, false},
		{Status, false, true}, {AgentEvent, false, true},
	} {
		if got := Audited(c.verb, c.allowed); got != c.want {
			t.Errorf("Audited(%s, allowed=%v) = %v, want %v", c.verb, c.allowed, got, c.want)
		}
	}
}

func TestReachesIsItselfAndWhatItsGrantsName(t *testing.T) {
	g1, _ := ParseGrant("exit@t1")
	g2, _ := ParseGrant("status@children")
	c := Caller{Task: "t2", Grants: []GrantRule{g1, g2}}
	for _, tc := range []struct {
		target, parent string
		want           bool
	}{{"t2", "", true}, {"t1", "", true}, {"c1", "t2", true}, {"c1", "t5", false}, {"t3", "", false}} {
		if got := c.Reaches(tc.target, tc.parent); got != tc.want {
			t.Errorf("Reaches(%s, parent %q) = %v, want %v", tc.target, tc.parent, got, tc.want)
		}
	}
	if !(Caller{}).Reaches("anything", "") {
		t.Error("the operator does not reach every task")
	}
}
