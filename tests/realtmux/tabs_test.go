package realtmux

import (
	"strings"
	"testing"
)

// A tab typed as a key is the Tab key to an agent TUI (opencode switches
// agents on it, claude toggles thinking), and a terminal draws it as
// spaces, never as itself. A message holding one goes as a bracketed
// paste, so it arrives as text, and is proven drawn by what follows its
// last tab: before, it was typed as keys and, never seen drawn, got no
// Enter (exit 3, the text left in the composer). The submit is confirmed
// by the agent's own record, which the fake writes as its CLI does.
func TestTextWithATabArrivesAsOnePasteAndIsSubmitted(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"claude", "opencode", "grok"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			a := s.startAgent("t1", h)
			texts := []string{"col1\tcol2 x", "rows:\nname\tage"}
			want := ""
			for _, text := range texts {
				r := s.run("", nil, "fm-send", "t1", text)
				if h == "grok" {
					// grok keeps no record fmctl reads: delivered, never
					// confirmed.
					wantCode(t, r, 3, "fm-send t1 "+strings.ReplaceAll(text, "\t", `\t`))
					if !strings.Contains(r.stderr, "cannot read grok's own record") {
						t.Fatalf("stderr = %q, want it to say grok's record cannot be read", r.stderr)
					}
				} else {
					wantCode(t, r, 0, "fm-send t1 "+strings.ReplaceAll(text, "\t", `\t`))
				}
				want += "\x1b[200~" + strings.ReplaceAll(text, "\n", "\r") + "\x1b[201~\r"
				a.assertBytes(want)
			}
			if got := a.submitted(); strings.Join(got, "\x00") != strings.Join(texts, "\x00") {
				t.Fatalf("submitted %q, want %q\n%s", got, texts, a.state())
			}
		})
	}
}
