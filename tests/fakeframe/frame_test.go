package fakeframe

import (
	"testing"

	"fmctl/harness"
)

// The fakes must read, by the real signatures, as a launched agent with an
// empty composer, and as holding what was typed.
func TestFramesReadByTheRealSignatures(t *testing.T) {
	for _, name := range []string{"claude", "codex", "opencode", "pi", "gemini"} {
		h, _ := harness.Lookup(name)
		sig, ok := h.Screen()
		if !ok {
			t.Fatalf("%s has no screen signatures", name)
		}
		draw := func(text string) []string {
			prefix, placeholder, above, below := Frame(name, text == "")
			rows := append([]string{name + " fake agent"}, above...)
			rows = append(rows, prefix+text+placeholder)
			return append(rows, below...)
		}
		if st := sig.ReadScreen(draw("")); !st.Launched(sig) || st.Composer != harness.ComposerEmpty {
			t.Errorf("%s empty frame reads %+v", name, st)
		}
		if st := sig.ReadScreen(draw("/exit")); st.Composer != harness.ComposerHolding || st.HeldText() != "/exit" {
			t.Errorf("%s frame holding /exit reads %+v", name, st)
		}
	}
}
