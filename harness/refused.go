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
// ones and refused (issue 37's survey, 2026-12); docs/harnesses.md says
// how each was tried.
var refused = []Refusal{
	refusal("amp", "@sourcegraph/amp", "its threads live on its vendor's server and it needs a login: no record on the machine proves what it took"),
	refusal("auggie", "@augmentcode/auggie", "it speaks only its vendor's own API, so no loopback stub can drive a turn and nothing it does can be verified here"),
	refusal("crush", "@charmland/crush", "its install downloads a binary from outside the npm registry"),
	refusal("grok-cli", "@vibe-kit/grok-cli", "no conversation record and no hooks: every claim would rest on the screen alone (the grok row is xAI's Grok Build CLI, not this)"),
}

func refusal(name, pkg, why string) Refusal {
	return Refusal{Name: name, Package: pkg, Why: why, Source: "docs/harnesses.md#refused-clis"}
}

// Refused returns the refused CLIs.
func Refused() []Refusal { return append([]Refusal(nil), refused...) }

// UnverifiedWhy is why a row without Verified is not verified: the tier
// runs only the CLIs installed from the registry.
const UnverifiedWhy = "not in the real-agent tier: its row comes from the original toolkit's spec and the CLI's public docs, untested against the real CLI"
