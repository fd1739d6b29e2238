package authority

import (
	"fmt"
	"slices"
	"strings"

	"fmctl/phrase"
	"fmctl/state"
)

// Children is the grant target that reaches every task whose record says
// the grantee spawned it (spawned_by=<grantee>), and lets it spawn them.
const Children = "children"

// GrantRule is one grant: verbs on a task, or on the grantee's children.
type GrantRule struct {
	Verbs  []string
	Target string // a task id, or Children
}

func (g GrantRule) String() string { return strings.Join(g.Verbs, ",") + "@" + g.Target }

// covers reports whether the rule lets its grantee run verb on target,
// whose record names parent as its spawner ("" when it has none or does
// not exist yet). A spawn under a children grant makes its child.
func (g GrantRule) covers(grantee, verb, target, parent string) bool {
	if !slices.Contains(g.Verbs, verb) {
		return false
	}
	if g.Target == Children {
		return verb == Spawn || (parent != "" && parent == grantee)
	}
	return g.Target == target
}

// ParseGrant reads one --grant value, verb[,verb]@id|children.
func ParseGrant(s string) (GrantRule, error) {
	verbList, target, ok := strings.Cut(s, "@")
	if !ok || verbList == "" || target == "" {
		return GrantRule{}, fmt.Errorf("grant '%s' is not verb[,verb]@id or verb[,verb]@%s", phrase.Printable(s), Children)
	}
	if target != Children && !state.ValidTaskID(target) {
		return GrantRule{}, fmt.Errorf("grant '%s' names '%s', which is neither a task id nor %s", phrase.Printable(s), phrase.Printable(target), Children)
	}
	var g GrantRule
	for _, v := range strings.Split(verbList, ",") {
		verb, known := LookupVerb(v)
		if !known || !verb.Grantable {
			return GrantRule{}, fmt.Errorf("grant '%s': '%s' is not a verb a grant can give (%s)", phrase.Printable(s), phrase.Printable(v), strings.Join(GrantableVerbs(), ", "))
		}
		if !slices.Contains(g.Verbs, v) {
			g.Verbs = append(g.Verbs, v)
		}
	}
	g.Target = target
	return g, nil
}

// ParseGrants reads a record's grants= value: rules separated by spaces.
func ParseGrants(s string) ([]GrantRule, error) {
	var out []GrantRule
	for _, f := range strings.Fields(s) {
		g, err := ParseGrant(f)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// FormatGrants is ParseGrants' inverse, the value fm-spawn records.
func FormatGrants(gs []GrantRule) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = g.String()
	}
	return strings.Join(parts, " ")
}
