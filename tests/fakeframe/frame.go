// Package fakeframe is the composer frame the test fakes (the fake tmux's
// panes and tests/fakeagent) draw for a harness: claude, codex and opencode
// the way the real CLI draws it, so fmctl's screen signatures
// (harness/screens.go) read a fake launch as ready and held text as held
// (pi, gemini and copilot too). Any other name gets a bare "> " prompt.
package fakeframe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

const rule = "────────────────────────────────────────"

// Frame returns the composer row's prefix and the rows drawn above and
// below it. An empty codex composer shows its placeholder after the prefix;
// the cursor stays at the prefix's end.
func Frame(name string, empty bool) (prefix, placeholder string, above, below []string) {
	switch name {
	case "claude":
		return "❯ ", "", []string{rule}, []string{rule, "  ⏵⏵ bypass permissions on (shift+tab to cycle)"}
	case "codex":
		// "■ " is the launch prompt's ended turn, which codex's ready needs.
		below = []string{"  fake-model default · /wt · fake thread"}
		if empty {
			placeholder = "Ask Codex to do anything"
		}
		return "› ", placeholder, []string{"■ fake turn ended"}, below
	case "pi":
		return "", "", []string{rule}, []string{rule, "/wt (master)"}
	case "gemini":
		// "✕ " is the launch prompt's ended turn, which gemini's ready needs.
		if empty {
			placeholder = "  Type your message or @path/to/file"
		}
		return " > ", placeholder, []string{"✕ [API Error: fake]", rule, " YOLO Ctrl+Y"}, []string{" /wt   no sandbox"}
	case "copilot":
		// Two rules frame the prompt row; the status row is under them.
		return "❯ ", "", []string{" /wt [⎇ master]", rule}, []string{rule, " ← open sidebar · Interactive · Allow All · / commands · ? help"}
	case "opencode":
		// "▣ " is the launch prompt's ended turn, which opencode's ready needs.
		return "  ┃  ", "", []string{"     ▣  Build · fake model", "  ┃"}, []string{"  ┃", "  ┃  Build · fake model", "  ╹▀▀▀▀▀▀▀▀", "   /wt   tab agents"}
	}
	return "> ", "", nil, nil
}

// CollapsedPaste is how the harness named name draws its i-th long paste p
// in the composer, and whether it collapses p at all, as the lab saw them:
// claude "[Pasted text #1 +29 lines]" past three lines or 800 bytes; codex
// "[Pasted Content 2160 chars]" past 1000 characters (930 were drawn in
// full, 2160 collapsed; codex's LARGE_PASTE_CHAR_THRESHOLD). The screen
// signatures read these placeholders (harness.ScreenSig.Collapsed).
func CollapsedPaste(name string, i int, p string) (string, bool) {
	switch name {
	case "claude":
		if strings.Count(p, "\n") > 2 || len(p) > 800 {
			return fmt.Sprintf("[Pasted text #%d +%d lines]", i+1, strings.Count(p, "\n")), true
		}
	case "codex":
		if n := utf8.RuneCountInString(p); n > 1000 {
			return fmt.Sprintf("[Pasted Content %d chars]", n), true
		}
	}
	return p, false
}
