package cli

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The README's exit-code table is generated from the one table; this fails
// when it drifts. UPDATE_README=1 rewrites it.
func TestReadmeExitCodesAreCurrent(t *testing.T) {
	const path = "../../../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceReadmeExitCodes(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if want == string(data) {
		return
	}
	if os.Getenv("UPDATE_README") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("README.md's exit-code table is stale: run `make readme-table`")
}

// The table is the exit codes: one row per code, in order from 0, each
// with a name and a one-line meaning, and the constants are its rows.
func TestExitCodeTable(t *testing.T) {
	for i, c := range ExitCodes() {
		if c.Code != i {
			t.Errorf("row %d has code %d", i, c.Code)
		}
		if c.Name == "" || c.Meaning == "" || strings.Contains(c.Meaning, "\n") {
			t.Errorf("code %d: name %q, meaning %q: want a name and one line", c.Code, c.Name, c.Meaning)
		}
	}
	for _, code := range []int{CodeDone, CodeFailed, CodeUsage, CodeUnconfirmed, CodeTimeout, CodeStalled} {
		if code >= len(ExitCodes()) {
			t.Errorf("code %d has no row", code)
		}
	}
	help := exitCodesHelp()
	if strings.Contains(help, "{{") {
		t.Error("the help section would be read as a template")
	}
	var exits strings.Builder
	if err := printExitCodes(&exits, 80); err != nil {
		t.Fatal(err)
	}
	table := strings.Join(strings.Fields(exits.String()), " ")
	for _, c := range ExitCodes() {
		if !strings.Contains(help, fmt.Sprintf("%d %s", c.Code, c.Name)) {
			t.Errorf("--help does not name code %d", c.Code)
		}
		if !strings.Contains(table, c.Meaning) {
			t.Errorf("--help-exits lacks code %d's meaning", c.Code)
		}
	}
	for _, l := range strings.Split(exits.String(), "\n") {
		if len(l) > 80 {
			t.Errorf("--help-exits at 80 columns: %q", l)
		}
	}
}
