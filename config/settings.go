package config

import (
	"fmt"
	"strings"
)

// Setting is one row of the table with its effective value in a run, as
// `fm-control capabilities` prints it.
type Setting struct {
	Name    string `json:"name"`
	Default string `json:"default"`
	Unit    Unit   `json:"unit"`
	Doc     string `json:"doc"`
	Value   string `json:"value"`
}

// Settings are the table's rows, in order, with their values in t.
func (t Tunables) Settings() []Setting {
	out := make([]Setting, len(table))
	for i, row := range table {
		out[i] = Setting{Name: row.Name, Default: row.Default, Unit: row.Unit, Doc: row.Doc, Value: row.Value(t)}
	}
	return out
}

// Markdown renders settings as the Markdown table docs/config.md embeds
// (withValue false) and `fm-control capabilities` prints (true).
func Markdown(settings []Setting, withValue bool) string {
	var b strings.Builder
	if withValue {
		b.WriteString("| variable | unit | default | value | bounds or chooses |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("| variable | unit | default | bounds or chooses |\n|---|---|---|---|\n")
	}
	for _, s := range settings {
		fmt.Fprintf(&b, "| `%s` | %s | %s |", s.Name, s.Unit, cell(s.Default))
		if withValue {
			fmt.Fprintf(&b, " %s |", cell(s.Value))
		}
		fmt.Fprintf(&b, " %s |\n", s.Doc)
	}
	return b.String()
}

// cell shows an empty value as unset, and a value as code.
func cell(v string) string {
	if v == "" {
		return "unset"
	}
	return "`" + v + "`"
}
