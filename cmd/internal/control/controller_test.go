package control

import (
	"testing"

	"fmctl/harness"
)

// The capability table's lifecycle rows and the verb bodies are one set: a
// row without a body would be refused as "not a control verb", and a body
// without a row would escape the row's ability checks.
func TestEveryLifecycleRowHasOneBody(t *testing.T) {
	rows := 0
	for _, v := range harness.Verbs() {
		_, has := lifecycleRuns[v.Name]
		switch {
		case v.Lifecycle && !has:
			t.Errorf("lifecycle verb %s has no body in lifecycleRuns", v.Name)
		case !v.Lifecycle && has:
			t.Errorf("read-only verb %s has a lifecycle body", v.Name)
		}
		if v.Lifecycle {
			rows++
		}
	}
	if rows != len(lifecycleRuns) {
		t.Errorf("%d lifecycle rows but %d bodies; every body needs a row of the capability table", rows, len(lifecycleRuns))
	}
}
