package authority

import (
	"fmt"
	"strings"
)

// Caller is who runs the binary, as far as the home can tell.
type Caller struct {
	// Task is the task whose pane the caller's process descends from; ""
	// is the operator.
	Task string
	// PanePID is that task's recorded pane pid, the ancestor that matched.
	PanePID int
	// Crew is set when the match was a pane recorded in Task's own home (a
	// secondmate's crew member): the crew task's id there.
	Crew string
	// Grants are Task's recorded grants.
	Grants []GrantRule
}

// Operator reports whether the caller has full authority.
func (c Caller) Operator() bool { return c.Task == "" }

// String names the caller for a refusal and the audit trail.
func (c Caller) String() string {
	switch {
	case c.Operator():
		return "the operator"
	case c.Crew != "":
		return fmt.Sprintf("task %s (through its crew task %s, pane pid %d)", c.Task, c.Crew, c.PanePID)
	}
	return fmt.Sprintf("task %s (pane pid %d)", c.Task, c.PanePID)
}

// Request is one thing a caller asks to do.
type Request struct {
	Caller Caller
	Verb   string
	// Target is the task acted on (for spawn, the id to create).
	Target string
	// TargetParent is the target's recorded spawned_by, "" when it has
	// none or no record.
	TargetParent string
}

// Refusal is a request the caller may not make. Nothing was done.
type Refusal struct {
	Request
	// May lists what the caller may do instead, one "verbs on target" each.
	May []string
}

func (r *Refusal) Error() string {
	what := r.Verb + " task " + r.Target
	switch r.Verb {
	case Spawn:
		what = "spawn task " + r.Target
	case Grant:
		what = "grant authority to task " + r.Target
	}
	return fmt.Sprintf("%s may not %s", r.Caller, what)
}

// MayText says what the caller may do instead, for the refusal's hint.
func (r *Refusal) MayText() string {
	return "a task may only " + strings.Join(r.May, "; ")
}

// Decide allows the request (nil) or refuses it with a *Refusal.
func Decide(req Request) error {
	if req.Caller.Operator() {
		return nil
	}
	v, known := LookupVerb(req.Verb)
	if known && v.Self && req.Target == req.Caller.Task {
		return nil
	}
	if known && v.Name != Grant {
		for _, g := range req.Caller.Grants {
			if g.covers(req.Caller.Task, req.Verb, req.Target, req.TargetParent) {
				return nil
			}
		}
	}
	may := []string{strings.Join(SelfVerbs(), ", ") + " on itself (" + req.Caller.Task + ")"}
	for _, g := range req.Caller.Grants {
		may = append(may, strings.Join(g.Verbs, ", ")+" on "+grantTarget(g.Target))
	}
	return &Refusal{Request: req, May: may}
}

func grantTarget(t string) string {
	if t == Children {
		return "the tasks it spawned"
	}
	return t
}

// Reaches reports whether the caller has any authority over target (whose
// record names parent as its spawner): the operator over every task, a task
// over itself and over the tasks its grants name. list shows these.
func (c Caller) Reaches(target, parent string) bool {
	if c.Operator() || target == c.Task {
		return true
	}
	for _, g := range c.Grants {
		if g.Target == target || (g.Target == Children && parent != "" && parent == c.Task) {
			return true
		}
	}
	return false
}

// Audited reports whether a decided request goes into the audit trail:
// every refusal, and every allowed call of an audited verb.
func Audited(verb string, allowed bool) bool {
	v, _ := LookupVerb(verb)
	return !allowed || v.Audited
}
