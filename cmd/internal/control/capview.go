package control

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"fmctl/cmd/internal/cli"
	"fmctl/config"
	"fmctl/harness"
)

// printCapabilitiesView is capabilities on a terminal: the capability
// table and the tunables as a few tables a person reads within width,
// from the same data the Markdown (--markdown, and piped) and JSON forms
// print. A backend fmctl ships no adapter for is left out: no task can
// run on one (--markdown and --json keep its row).
func printCapabilitiesView(w io.Writer, width int, t harness.Table, settings []config.Setting) error {
	var b strings.Builder
	section := func(title string, header []string, rows [][]string) {
		fmt.Fprintf(&b, "%s\n", title)
		_ = cli.WriteTable(&b, width, header, rows)
		b.WriteString("\n")
	}
	paragraph := func(text string) {
		b.WriteString(strings.Join(cli.Wrap(text, width), "\n") + "\n\n")
	}

	var verbs [][]string
	for _, v := range t.Verbs {
		verbs = append(verbs, []string{"  " + v.Name, v.Purpose})
	}
	section("VERBS (fm-control help <verb> gives its postcondition)", nil, verbs)

	var keys, launch, effects [][]string
	var acks []string
	for _, h := range t.Harnesses {
		interrupt := string(h.InterruptKey)
		if h.Repeat > 1 {
			interrupt += fmt.Sprintf(" x%d", h.Repeat)
		}
		kinds := make([]string, len(h.Kinds))
		for i, k := range h.Kinds {
			kinds[i] = string(k)
		}
		if h.Ack != harness.AckNone {
			acks = append(acks, h.Name+" by "+string(h.Ack))
		}
		keys = append(keys, []string{h.Name, interrupt, fmt.Sprint(h.Rounds), cell(string(h.ClearKey)), h.ExitCommand, strings.Join(kinds, ", ")})
		verified := "-"
		if r := h.Verified; r != nil {
			verified = r.Package + " " + r.Range()
			if r.Range() != r.Version {
				verified += " (CI: " + r.Version + ")"
			}
		}
		launch = append(launch, []string{h.Name, cell(h.Launch.ModelFlag), cell(h.Launch.EffortFlag), verified})
		for _, e := range h.KeyEffects() {
			if e.Idle != harness.EffectUnknown || e.Busy != harness.EffectUnknown {
				effects = append(effects, []string{h.Name, string(e.Key), string(e.Idle), string(e.Busy)})
			}
		}
	}
	section("HARNESSES: interrupt, exit and kinds", []string{"HARNESS", "INTERRUPT", "ROUNDS", "CLEAR", "EXIT", "KINDS"}, keys)
	if len(acks) > 0 {
		paragraph("An interrupt is also acknowledged (proof=ack): " + strings.Join(acks, ", ") + ".")
	}
	section("HARNESSES: launch flags and the releases verified", []string{"HARNESS", "MODEL FLAG", "EFFORT FLAG", "VERIFIED AGAINST"}, launch)
	paragraph("A harness verified against nothing (-) is " + harness.UnverifiedWhy + ".")
	var refused [][]string
	for _, r := range t.Refused {
		refused = append(refused, []string{r.Name, r.Package, r.Why})
	}
	section("REFUSED CLIs (no row: fmctl does not drive them)", []string{"CLI", "NPM PACKAGE", "WHY"}, refused)
	section("KEY EFFECTS on an empty composer (a key not listed: unknown in both states)", []string{"HARNESS", "KEY", "AT IDLE", "DURING A TURN"}, effects)
	paragraph("Key effects " + harness.KeyEffectsNote)

	var backends [][]string
	for _, be := range t.Backends {
		if !be.Adapter {
			continue
		}
		keys := make([]string, len(be.Keys))
		for i, k := range be.Keys {
			keys[i] = string(k)
		}
		backends = append(backends, []string{be.Name, map[bool]string{true: "yes", false: "no"}[be.Classifier], strings.Join(keys, " ")})
	}
	section("BACKENDS (exit and relaunch need a recovery-grade classifier)", []string{"BACKEND", "CLASSIFIER", "KEYS"}, backends)
	paragraph("Family rule: " + t.Family.Sentence())

	b.WriteString("FM_* VARIABLES, with their values in this run\n")
	writeTunables(&b, width, settings)
	_, err := io.WriteString(w, b.String())
	return err
}

// valueColumn is the widest value the tunables' VALUE column holds; a
// longer one (a home's path) stands on its row alone, its meaning below
// it, so one long path does not squeeze every other row's meaning.
const valueColumn = 20

// writeTunables is the FM_* table: each variable, its value in this run
// and what it bounds or chooses (with its default where the value is
// another), the meaning wrapped under its column.
func writeTunables(b *strings.Builder, width int, settings []config.Setting) {
	nameW, valueW := len("VARIABLE"), len("VALUE")
	for _, s := range settings {
		nameW = max(nameW, len(s.Name))
		if n := utf8.RuneCountInString(orUnset(s.Value)); n <= valueColumn {
			valueW = max(valueW, n)
		}
	}
	lead := nameW + 2 + valueW + 2
	pad := func(s string, n int) string { return s + strings.Repeat(" ", n-utf8.RuneCountInString(s)+2) }
	row := func(name, value, doc string) {
		head := pad(name, nameW)
		if utf8.RuneCountInString(value) > valueW {
			fmt.Fprintf(b, "%s%s\n", head, value)
			head = strings.Repeat(" ", nameW+2)
			value = ""
		}
		head += pad(value, valueW)
		for _, l := range cli.Wrap(doc, max(width-lead, minDocWidth)) {
			b.WriteString(strings.TrimRight(head+l, " ") + "\n")
			head = strings.Repeat(" ", lead)
		}
	}
	row("VARIABLE", "VALUE", "BOUNDS OR CHOOSES")
	for _, s := range settings {
		doc := s.Doc
		if s.Value != s.Default && s.Default != "" {
			doc = "(default " + s.Default + ") " + doc
		}
		row(s.Name, orUnset(s.Value), doc)
	}
}

// minDocWidth keeps a meaning readable on a terminal too narrow for it.
const minDocWidth = 20

func orUnset(v string) string {
	if v == "" {
		return "unset"
	}
	return v
}
