package control

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"fmctl/config"
	"fmctl/harness"
)

// capabilities on a terminal fits the width it is given, names every
// harness and every backend a task can run on, and none fmctl ships no
// adapter for.
func TestCapabilitiesViewFitsAndNamesOnlyAdapters(t *testing.T) {
	table := harness.Snapshot()
	for _, width := range []int{80, 100} {
		var out bytes.Buffer
		if err := printCapabilitiesView(&out, width, table, config.DefaultTunables().Settings()); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		for _, l := range strings.Split(text, "\n") {
			if utf8.RuneCountInString(l) > width {
				t.Errorf("at %d columns, a line of %d: %s", width, utf8.RuneCountInString(l), l)
			}
		}
		for _, h := range table.Harnesses {
			if !strings.Contains(text, "\n"+h.Name+" ") {
				t.Errorf("harness %s missing", h.Name)
			}
		}
		for _, be := range table.Backends {
			if named := strings.Contains(text, "\n"+be.Name+" "); named != be.Adapter {
				t.Errorf("backend %s (adapter %v) named: %v", be.Name, be.Adapter, named)
			}
		}
		if strings.Contains(text, "|") {
			t.Error("Markdown in the terminal view")
		}
	}
}
