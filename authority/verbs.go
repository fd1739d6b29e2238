// Package authority decides what the caller of an fm-* binary may do: the
// operator (firstmate, or a person) may do anything; a task's own agent,
// found by its process descending from the task's recorded pane, may look at
// itself and report its own events, and do more only where the operator
// granted it. It stops a confused agent, not a hostile process of the same
// user (docs/security.md).
package authority

import "slices"

// Verb is one thing a caller may ask an fm-* binary to do to a task.
type Verb struct {
	Name string
	// Self: a task may do it to itself without a grant.
	Self bool
	// Audited: an allowed call appends a line to the target's audit trail
	// (a refused call of any verb always does).
	Audited bool
	// Grantable: the operator may grant it with fm-spawn --grant.
	Grantable bool
}

// The verbs: fm-send's one, fm-control's, fm-spawn's and fm-teardown's. grant is the
// operator's alone: it is what --grant does, and no grant gives it.
const (
	Send       = "send"
	Interrupt  = "interrupt"
	Exit       = "exit"
	Relaunch   = "relaunch"
	Rebind     = "rebind"
	Recover    = "recover"
	Spawn      = "spawn"
	Teardown   = "teardown"
	Grant      = "grant"
	Status     = "status"
	Read       = "read"
	Wait       = "wait"
	List       = "list"
	AgentEvent = "agent-event"
)

// verbs is the table. agent-event is not audited when allowed: a task's
// hooks report on every prompt, and each event already needs the launch's
// event key (docs/agent-state.md); a refused one is audited like any other.
var verbs = []Verb{
	{Name: Send, Audited: true, Grantable: true},
	{Name: Interrupt, Audited: true, Grantable: true},
	{Name: Exit, Audited: true, Grantable: true},
	{Name: Relaunch, Audited: true, Grantable: true},
	{Name: Rebind, Audited: true, Grantable: true},
	{Name: Recover, Audited: true, Grantable: true},
	{Name: Spawn, Audited: true, Grantable: true},
	{Name: Teardown, Audited: true, Grantable: true},
	{Name: Grant, Audited: true},
	{Name: Status, Self: true, Grantable: true},
	{Name: Read, Self: true, Grantable: true},
	{Name: Wait, Self: true, Grantable: true},
	{Name: List, Self: true, Grantable: true},
	{Name: AgentEvent, Self: true},
}

// LookupVerb finds a verb by name.
func LookupVerb(name string) (Verb, bool) {
	i := slices.IndexFunc(verbs, func(v Verb) bool { return v.Name == name })
	if i < 0 {
		return Verb{}, false
	}
	return verbs[i], true
}

// SelfVerbs names what every task may do to itself.
func SelfVerbs() []string { return names(func(v Verb) bool { return v.Self }) }

// GrantableVerbs names what --grant may give.
func GrantableVerbs() []string { return names(func(v Verb) bool { return v.Grantable }) }

func names(keep func(Verb) bool) []string {
	var out []string
	for _, v := range verbs {
		if keep(v) {
			out = append(out, v.Name)
		}
	}
	return out
}
