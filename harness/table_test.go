package harness_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"fmctl/harness"
)

// specRow is one row of control.md section 3's harness table, copied by hand
// so the Go table is checked against the spec rather than against itself.
type specRow struct {
	name      string
	interrupt harness.Key
	repeat    int
	clear     harness.Key
	ack       harness.AckSource
	exit      string
	kinds     []harness.Kind
}

var (
	all      = []harness.Kind{harness.KindShip, harness.KindScout, harness.KindSecondmate}
	noSecond = []harness.Kind{harness.KindShip, harness.KindScout}
)

var specHarnessTable = []specRow{
	{"claude", harness.KeyEscape, 1, "", harness.AckNone, "/exit", all},
	{"codex", harness.KeyEscape, 1, "", harness.AckNone, "/quit", all},
	{"opencode", harness.KeyEscape, 2, "", harness.AckNone, "/exit", all},
	{"kilo", harness.KeyEscape, 2, "", harness.AckNone, "/exit", all},
	{"pi", harness.KeyEscape, 1, "", harness.AckNone, "/quit", all},
	{"gemini", harness.KeyEscape, 1, "", harness.AckNone, "/quit", noSecond},
	{"qwen", harness.KeyEscape, 1, "", harness.AckNone, "/quit", noSecond},
	{"copilot", harness.KeyCtrlC, 1, "", harness.AckNone, "/exit", noSecond},
	{"cline", harness.KeyEscape, 1, "", harness.AckNone, "/exit", noSecond},
	{"pi-signed", harness.KeyEscape, 1, "", harness.AckNone, "/quit", all},
	{"grok", harness.KeyCtrlC, 1, "", harness.AckNone, "/exit", all},
	{"kimi", harness.KeyEscape, 1, "", harness.AckNone, "/exit", all},
	{"cursor", harness.KeyEscape, 1, "", harness.AckNone, "/exit", all},
	{"agy", harness.KeyEscape, 1, "", harness.AckNone, "/exit", all},
	{"muse", harness.KeyEscape, 1, harness.KeyCtrlU, harness.AckMuseSessionTerminal, "/exit", noSecond},
}

func TestHarnessRowsMatchSpecTable(t *testing.T) {
	for _, want := range specHarnessTable {
		t.Run(want.name, func(t *testing.T) {
			h, ok := harness.Lookup(want.name)
			if !ok {
				t.Fatalf("Lookup(%q) found nothing; the spec lists it as verified", want.name)
			}
			if h.Name != want.name {
				t.Errorf("Name = %q, want %q", h.Name, want.name)
			}
			if h.InterruptKey != want.interrupt {
				t.Errorf("InterruptKey = %q, want %q", h.InterruptKey, want.interrupt)
			}
			if h.Repeat != want.repeat {
				t.Errorf("Repeat = %d, want %d", h.Repeat, want.repeat)
			}
			if h.ClearKey != want.clear {
				t.Errorf("ClearKey = %q, want %q", h.ClearKey, want.clear)
			}
			if h.Ack != want.ack {
				t.Errorf("Ack = %q, want %q", h.Ack, want.ack)
			}
			if h.ExitCommand != want.exit {
				t.Errorf("ExitCommand = %q, want %q", h.ExitCommand, want.exit)
			}
			if !slices.Equal(h.Kinds, want.kinds) {
				t.Errorf("Kinds = %v, want %v", h.Kinds, want.kinds)
			}
			for _, k := range all {
				if got, want := h.SupportsKind(k), slices.Contains(want.kinds, k); got != want {
					t.Errorf("SupportsKind(%s) = %v, want %v", k, got, want)
				}
			}
			// The press gap exists so repeated presses are separate input events.
			if h.PressGap != 200*time.Millisecond {
				t.Errorf("PressGap = %v, want 200ms", h.PressGap)
			}
		})
	}
}

// gemini, qwen and copilot also refuse secondmate: they have no
// wake/supervision protocol.
func TestMuseRefusesSecondmateOnly(t *testing.T) {
	muse, _ := harness.Lookup("muse")
	if muse.SupportsKind(harness.KindSecondmate) {
		t.Error("muse must not support kind secondmate")
	}
	if !muse.SupportsKind(harness.KindShip) || !muse.SupportsKind(harness.KindScout) {
		t.Error("muse must support ship and scout")
	}
	for _, h := range harness.Harnesses() {
		if h.Name != "muse" && h.Name != "gemini" && h.Name != "qwen" && h.Name != "copilot" && h.Name != "cline" && !h.SupportsKind(harness.KindSecondmate) {
			t.Errorf("%s refuses secondmate; only muse, gemini, qwen, copilot and cline should", h.Name)
		}
	}
}

func TestVerifiedNamesAreExactlyTheSpecList(t *testing.T) {
	want := []string{"claude", "codex", "opencode", "kilo", "pi", "gemini", "qwen", "copilot", "cline", "pi-signed", "grok", "kimi", "cursor", "agy", "muse"}
	if got := harness.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	var fromRows []string
	for _, h := range harness.Harnesses() {
		fromRows = append(fromRows, h.Name)
	}
	if !slices.Equal(fromRows, want) {
		t.Fatalf("Harnesses() names = %v, want %v", fromRows, want)
	}
	for _, bogus := range []string{"", "gemini-cli", "Claude", "claude-opus", "pi-launcher", "grok-2"} {
		if _, ok := harness.Lookup(bogus); ok {
			t.Errorf("Lookup(%q) succeeded; Lookup is exact and %q is not verified", bogus, bogus)
		}
	}
}

func TestHarnessesReturnsACopy(t *testing.T) {
	hs := harness.Harnesses()
	hs[0].InterruptKey = "Tab"
	if h, _ := harness.Lookup(hs[0].Name); h.InterruptKey == "Tab" {
		t.Fatal("mutating Harnesses()'s result changed the table")
	}
}

func TestFamilyPrefixRule(t *testing.T) {
	cases := []struct {
		recorded string
		family   string // "" = no family
	}{
		{"claude", "claude"},
		{"claude-opus", "claude"},
		{"codex", "codex"},
		{"codex-cli", "codex"},
		{"opencode", "opencode"},
		{"kilo", "kilo"},
		{"kilocode", "kilo"},
		{"grok", "grok"},
		{"grok-2", "grok"},
		{"kimi", "kimi"},
		{"kimi-k2", "kimi"},
		{"cursor", "cursor"},
		{"cursor-agent", "cursor"},
		{"agy", "agy"},
		{"agy2", "agy"},
		{"muse", "muse"},
		{"muse-bin-x", "muse"},
		{"pi", "pi"},
		{"pi-signed", "pi-signed"},
		// pi and pi-signed are exact: no prefix reaches them.
		{"pi-launcher", ""},
		{"pix", ""},
		{"pi-signed2", ""},
		{"someagent", ""},
		{"", ""},
		{"gemini", "gemini"},
		{"qwen", "qwen"},
		{"Claude", ""},
		{" claude", ""},
	}
	for _, c := range cases {
		h, ok := harness.Family(c.recorded)
		if c.family == "" {
			if ok {
				t.Errorf("Family(%q) = %s, want no family", c.recorded, h.Name)
			}
			continue
		}
		if !ok || h.Name != c.family {
			t.Errorf("Family(%q) = %q,%v, want %q", c.recorded, h.Name, ok, c.family)
		}
	}
	pi, _ := harness.Family("pi")
	signed, _ := harness.Family("pi-signed")
	if pi.Name == signed.Name || pi.Launch.Binary == signed.Launch.Binary {
		t.Errorf("pi-signed resolved to the same adapter as pi (%s, %s)", pi.Launch.Binary, signed.Launch.Binary)
	}
}

func TestBackendKeyMatrix(t *testing.T) {
	allKeys := []harness.Key{harness.KeyEscape, harness.KeyEnter, harness.KeyCtrlC, harness.KeyCtrlU}
	cases := []struct {
		name       string
		keys       []harness.Key
		classifier bool
		adapter    bool
	}{
		{"tmux", allKeys, true, true},
		{"herdr", allKeys, true, true},
		{"zellij", allKeys, false, true},
		{"cmux", allKeys, false, false},
		{"orca", []harness.Key{harness.KeyEnter, harness.KeyCtrlC}, false, false},
	}
	for _, c := range cases {
		b, ok := harness.LookupBackend(c.name)
		if !ok {
			t.Errorf("LookupBackend(%q) not found", c.name)
			continue
		}
		for _, k := range allKeys {
			if got, want := b.CanDeliver(k), slices.Contains(c.keys, k); got != want {
				t.Errorf("%s.CanDeliver(%s) = %v, want %v", c.name, k, got, want)
			}
		}
		if b.CanDeliver("Tab") || b.CanDeliver("") {
			t.Errorf("%s delivers a key outside the named set", c.name)
		}
		if b.Classifier != c.classifier {
			t.Errorf("%s.Classifier = %v, want %v", c.name, b.Classifier, c.classifier)
		}
		if b.Adapter != c.adapter {
			t.Errorf("%s.Adapter = %v, want %v", c.name, b.Adapter, c.adapter)
		}
	}
	var classified []string
	for _, b := range harness.Backends() {
		if b.Classifier {
			classified = append(classified, b.Name)
		}
	}
	if !slices.Equal(classified, []string{"tmux", "herdr"}) {
		t.Errorf("backends with a recovery-grade classifier = %v, want exactly [tmux herdr]", classified)
	}
	if got := harness.BackendNames(); !slices.Equal(got, []string{"cmux", "herdr", "orca", "tmux", "zellij"}) {
		t.Errorf("BackendNames() = %v", got)
	}
}

func TestUnknownBackendHasNoKeysAndNoClassifier(t *testing.T) {
	for _, name := range []string{"screen", "", "TMUX", "wezterm"} {
		b, ok := harness.LookupBackend(name)
		if ok {
			t.Errorf("LookupBackend(%q) found a row", name)
		}
		for _, k := range harness.NamedKeys {
			if b.CanDeliver(k) {
				t.Errorf("unknown backend %q can deliver %s", name, k)
			}
		}
		if b.Classifier || b.Adapter {
			t.Errorf("unknown backend %q claims classifier=%v adapter=%v", name, b.Classifier, b.Adapter)
		}
	}
}

func TestVerbAllowlistIsClosed(t *testing.T) {
	var names, readOnly []string
	for _, v := range harness.Verbs() {
		if !v.Lifecycle {
			readOnly = append(readOnly, v.Name)
			if v.NeedsVerified {
				t.Errorf("read-only verb %s claims needs_classifier", v.Name)
			}
			continue
		}
		names = append(names, v.Name)
	}
	if !slices.Equal(names, []string{"interrupt", "exit", "relaunch", "rebind"}) {
		t.Fatalf("lifecycle verbs = %v, want exactly [interrupt exit relaunch rebind]", names)
	}
	if !slices.Equal(readOnly, []string{"list", "wait", "read"}) {
		t.Fatalf("read-only verbs = %v, want exactly [list wait read]", readOnly)
	}
	for _, n := range names {
		if _, ok := harness.LookupVerb(n); !ok {
			t.Errorf("LookupVerb(%q) refused an allowlisted verb", n)
		}
	}
	for _, bad := range []string{"resume", "clear", "kill", "teardown", "send", "Interrupt", "", "exit ", "Rebind"} {
		if _, ok := harness.LookupVerb(bad); ok {
			t.Errorf("LookupVerb(%q) accepted a verb outside the allowlist", bad)
		}
	}
	in, _ := harness.LookupVerb("interrupt")
	ex, _ := harness.LookupVerb("exit")
	re, _ := harness.LookupVerb("relaunch")
	if in.NeedsVerified || !ex.NeedsVerified || !re.NeedsVerified {
		t.Errorf("needs_classifier: interrupt=%v exit=%v relaunch=%v, want false true true", in.NeedsVerified, ex.NeedsVerified, re.NeedsVerified)
	}
}

func TestParseKeyFoldsAliases(t *testing.T) {
	good := map[string]harness.Key{
		"Escape": harness.KeyEscape, "escape": harness.KeyEscape, "Esc": harness.KeyEscape, "esc": harness.KeyEscape,
		"Enter": harness.KeyEnter, "enter": harness.KeyEnter,
		"C-c": harness.KeyCtrlC, "c-c": harness.KeyCtrlC, "ctrl+c": harness.KeyCtrlC, "Ctrl+C": harness.KeyCtrlC,
		"C-u": harness.KeyCtrlU, "c-u": harness.KeyCtrlU, "ctrl+u": harness.KeyCtrlU, "Ctrl+U": harness.KeyCtrlU,
	}
	for in, want := range good {
		if got, ok := harness.ParseKey(in); !ok || got != want {
			t.Errorf("ParseKey(%q) = %q,%v, want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "Tab", "C-d", "Return", "ESC", " Enter", "Enter\n", "C-c;", "Escape Enter", "M-x"} {
		if got, ok := harness.ParseKey(bad); ok {
			t.Errorf("ParseKey(%q) = %q, want refused", bad, got)
		}
	}
	if !slices.Equal(harness.NamedKeys, []harness.Key{"Escape", "Enter", "C-c", "C-u"}) {
		t.Errorf("NamedKeys = %v", harness.NamedKeys)
	}
}

func TestJSONRoundTripsToTheSameRows(t *testing.T) {
	data, err := harness.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var got harness.Table
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("JSON() output does not decode: %v", err)
	}
	want := harness.Snapshot()
	// PressGap is carried as press_gap_ms, which Harness does not decode.
	for i := range want.Harnesses {
		want.Harnesses[i].PressGap = 0
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded table differs from Snapshot()\n got: %+v\nwant: %+v", got, want)
	}
	var raw struct {
		Harnesses []struct {
			Name       string `json:"name"`
			PressGapMS int64  `json:"press_gap_ms"`
		} `json:"harnesses"`
		Family harness.FamilyRules `json:"family_rule"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.Harnesses) != len(specHarnessTable) {
		t.Fatalf("JSON has %d harnesses, want %d", len(raw.Harnesses), len(specHarnessTable))
	}
	for i, h := range raw.Harnesses {
		if h.Name != specHarnessTable[i].name || h.PressGapMS != 200 {
			t.Errorf("JSON harness %d = %s press_gap_ms=%d, want %s 200", i, h.Name, h.PressGapMS, specHarnessTable[i].name)
		}
	}
	if !slices.Equal(raw.Family.Exact, []string{"pi", "pi-signed"}) {
		t.Errorf("family_rule.exact = %v, want [pi pi-signed]", raw.Family.Exact)
	}
	if len(raw.Family.Prefix) != len(raw.Harnesses)-len(raw.Family.Exact) || !slices.Contains(raw.Family.Prefix, "kilo*") || !slices.Contains(raw.Family.Prefix, "grok*") {
		t.Errorf("family_rule.prefix = %v, want every other harness with '*'", raw.Family.Prefix)
	}
}

func TestParseKindDefaultsToShip(t *testing.T) {
	cases := map[string]harness.Kind{"": harness.KindShip, "ship": harness.KindShip, "scout": harness.KindScout, "secondmate": harness.KindSecondmate}
	for in, want := range cases {
		if got, ok := harness.ParseKind(in); !ok || got != want {
			t.Errorf("ParseKind(%q) = %q,%v, want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"Ship", "crew", " ship"} {
		if _, ok := harness.ParseKind(bad); ok {
			t.Errorf("ParseKind(%q) accepted", bad)
		}
	}
}

func TestPopupAndAckPointerComeFromTheRow(t *testing.T) {
	codex, _ := harness.Lookup("codex")
	claude, _ := harness.Lookup("claude")
	var unverified harness.Harness
	for _, c := range []struct {
		h    harness.Harness
		text string
		want bool
	}{
		{codex, "$skill", true}, {codex, "/model", true}, {codex, "hello $x", false},
		{claude, "$skill", false}, {claude, "/exit", true}, {unverified, "/x", true}, {unverified, "$x", false},
	} {
		if got := c.h.OpensPopup(c.text); got != c.want {
			t.Errorf("%q.OpensPopup(%q) = %v, want %v", c.h.Name, c.text, got, c.want)
		}
	}
	muse, _ := harness.Lookup("muse")
	if p := muse.Ack.PointerFile("t1"); p != "t1.muse-session" || !slices.Contains(muse.Wiring, "state/<id>.muse-session") {
		t.Errorf("muse ack pointer = %q (wiring %v); want t1.muse-session, one of its wiring files", p, muse.Wiring)
	}
	if p := claude.Ack.PointerFile("t1"); p != "" {
		t.Errorf("claude has no ack source but a pointer file %q", p)
	}
}

// A refused CLI is said with why and where, and is never also a row
// fm-spawn could launch.
func TestRefusedCLIsAreNoRows(t *testing.T) {
	if len(harness.Refused()) == 0 {
		t.Fatal("no refused CLI listed")
	}
	for _, r := range harness.Refused() {
		if r.Package == "" || r.Why == "" || r.Source == "" {
			t.Errorf("refused %s lacks its package, why or source: %+v", r.Name, r)
		}
		if _, ok := harness.Lookup(r.Name); ok {
			t.Errorf("refused %s is also a harness row", r.Name)
		}
	}
}
