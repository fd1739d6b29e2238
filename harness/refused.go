package harness

// Refusal is an agent CLI fmctl does not drive, and why: a decision with
// its source, not a gap nobody looked at. fm-spawn names no such harness
// (the table has no row for it), so these are said, not enforced.
type Refusal struct {
	Name    string `json:"name"`
	Package string `json:"package"` // on the npm registry
	Why     string `json:"why"`
	Source  string `json:"source"`
}

// refused are the CLIs tried from the npm registry beside the verified
// ones and refused (issue 37's survey, 2026-12).
var refused = []Refusal{
	{Name: "amp", Package: "@sourcegraph/amp",
		Why:    "its threads live on its vendor's server and it needs a login: no record on the machine proves what it took",
		Source: "docs/harnesses.md#refused-clis"},
	{Name: "auggie", Package: "@augmentcode/auggie",
		Why:    "it speaks only its vendor's own API, so no loopback stub can drive a turn and nothing it does can be verified here",
		Source: "docs/harnesses.md#refused-clis"},
	{Name: "crush", Package: "@charmland/crush",
		Why:    "its install downloads a binary from outside the npm registry",
		Source: "docs/harnesses.md#refused-clis"},
	{Name: "grok-cli", Package: "@vibe-kit/grok-cli",
		Why:    "no conversation record and no hooks: every claim would rest on the screen alone (the grok row is xAI's Grok Build CLI, not this)",
		Source: "docs/harnesses.md#refused-clis"},
}

// Refused returns the refused CLIs.
func Refused() []Refusal { return append([]Refusal(nil), refused...) }

// UnverifiedWhy is why a row without Verified is not verified: the tier
// runs only the CLIs installed from the registry.
const UnverifiedWhy = "not in the real-agent tier: its row comes from the original toolkit's spec and the CLI's public docs, untested against the real CLI"
