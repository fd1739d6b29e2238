package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Table is the whole capability table as one value, for --json.
type Table struct {
	Verbs     []Verb      `json:"verbs"`
	Harnesses []Harness   `json:"harnesses"`
	Backends  []Backend   `json:"backends"`
	Family    FamilyRules `json:"family_rule"`
	Efforts   []string    `json:"efforts"`
	Keys      []Key       `json:"keys"`
	Refused   []Refusal   `json:"refused"`
}

// FamilyRules documents how a recorded harness resolves to an adapter.
type FamilyRules struct {
	Exact  []string `json:"exact"`
	Prefix []string `json:"prefix"`
}

// Snapshot returns the table.
func Snapshot() Table {
	t := Table{Verbs: Verbs(), Harnesses: Harnesses(), Backends: Backends(), Efforts: Efforts, Keys: NamedKeys, Refused: Refused()}
	for _, h := range harnesses {
		if exactFamilies[h.Name] {
			t.Family.Exact = append(t.Family.Exact, h.Name)
		} else {
			t.Family.Prefix = append(t.Family.Prefix, h.Name+"*")
		}
	}
	return t
}

// MarshalJSON adds the press gap in milliseconds and the key effects.
func (h Harness) MarshalJSON() ([]byte, error) {
	type plain Harness
	return json.Marshal(struct {
		plain
		PressGapMS int64       `json:"press_gap_ms"`
		KeyEffects []KeyEffect `json:"key_effects"`
	}{plain(h), h.PressGap.Milliseconds(), h.KeyEffects()})
}

// JSON renders the table as indented JSON.
func JSON() ([]byte, error) {
	return json.MarshalIndent(Snapshot(), "", "  ")
}

// Text renders the table as Markdown tables, the form the README embeds.
func Text() string {
	var b strings.Builder
	b.WriteString("| verb | purpose | postcondition |\n|---|---|---|\n")
	for _, v := range verbs {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", v.Name, v.Purpose, v.Postcondition)
	}
	b.WriteString("\n| harness | interrupt key | repeat | rounds | clear key | ack source | exit command | kinds | model flag | effort flag | verified against |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, h := range harnesses {
		kinds := make([]string, len(h.Kinds))
		for i, k := range h.Kinds {
			kinds[i] = string(k)
		}
		verified := "-"
		if h.Verified != nil {
			verified = h.Verified.Package + " " + h.Verified.Range()
			if h.Verified.Range() != h.Verified.Version {
				verified += " (CI: " + h.Verified.Version + ")"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", h.Name, h.InterruptKey, h.Repeat, h.Rounds,
			dash(string(h.ClearKey)), h.Ack, h.ExitCommand, strings.Join(kinds, ", "), dash(h.Launch.ModelFlag), dash(h.Launch.EffortFlag), verified)
	}
	b.WriteString("\nA row verified against nothing (-) is " + UnverifiedWhy + ".\n")
	b.WriteString("\n| refused CLI | npm package | why |\n|---|---|---|\n")
	for _, r := range refused {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Name, r.Package, r.Why)
	}
	b.WriteString("\n| key effects (idle / busy) | " + strings.Join(KeyNames(), " | ") + " |\n|---|" + strings.Repeat("---|", len(NamedKeys)) + "\n")
	for _, h := range harnesses {
		fmt.Fprintf(&b, "| %s |", h.Name)
		for _, e := range h.KeyEffects() {
			fmt.Fprintf(&b, " %s / %s |", e.Idle, e.Busy)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nKey effects are idle / busy, on an empty composer " + KeyEffectsNote + "\n")
	b.WriteString("\n| backend | Escape | Enter | C-c | C-u | recovery-grade classifier | adapter |\n|---|---|---|---|---|---|---|\n")
	for _, be := range backendRows {
		fmt.Fprintf(&b, "| %s |", be.Name)
		for _, k := range NamedKeys {
			fmt.Fprintf(&b, " %s |", yes(be.CanDeliver(k)))
		}
		fmt.Fprintf(&b, " %s | %s |\n", yes(be.Classifier), yes(be.Adapter))
	}
	b.WriteString("\nFamily rule: " + Snapshot().Family.Sentence() + "\n")
	return b.String()
}

// KeyEffectsNote is what every form of the key-effects table says after it.
const KeyEffectsNote = "(fm-control capabilities --json gives each one's source); " +
	"fm-send --key refuses a key that quits the agent in either state unless --allow-exit is given."

// Sentence says how a recorded harness resolves to an adapter.
func (f FamilyRules) Sentence() string {
	return strings.Join(f.Exact, ", ") + " resolve only by exact name; " +
		"any other recorded value resolves to the adapter whose name it starts with (grok-2 -> grok); anything else has no family and is refused."
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
