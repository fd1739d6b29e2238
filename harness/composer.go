package harness

import "strings"

// isRule reports a full-width ──── rule (a composer's frame in claude, pi
// and gemini). A short run of ─ inside text is not one.
func isRule(row string) bool {
	t := strings.TrimSpace(row)
	return len([]rune(t)) >= 20 && strings.Trim(t, "─") == ""
}

// composer finds the composer by the layout and returns its non-empty rows,
// prompt and frame stripped; drawn is false when no composer is on screen.
func (sig ScreenSig) composer(rows []string) (held []string, drawn bool) {
	switch sig.Layout {
	case LayoutPromptAfterRule:
		return sig.promptAfterRule(rows)
	case LayoutBetweenRules:
		return betweenRules(rows)
	case LayoutLastPrompt:
		return sig.lastPrompt(rows)
	case LayoutBarBlock:
		return barBlock(rows)
	}
	return nil, false
}

// cutPrompt strips a composer prompt prefix from a row.
func (sig ScreenSig) cutPrompt(row string) (string, bool) {
	for _, p := range sig.Prompt {
		if row == strings.TrimRight(p, " ") {
			return "", true
		}
		if strings.HasPrefix(row, p) {
			return trimRow(strings.TrimPrefix(row, p)), true
		}
	}
	return "", false
}

func (sig ScreenSig) promptAfterRule(rows []string) ([]string, bool) {
	for i := len(rows) - 1; i > 0; i-- {
		first, ok := sig.cutPrompt(rows[i])
		if !ok || !isRule(rows[i-1]) {
			continue
		}
		held := appendText(nil, first)
		for _, r := range rows[i+1:] {
			if isRule(r) {
				return held, true
			}
			held = appendText(held, trimRow(r))
		}
		// No closing rule: the composer is cut off, so not provably drawn.
		return nil, false
	}
	return nil, false
}

func betweenRules(rows []string) ([]string, bool) {
	last := -1
	for i := len(rows) - 1; i >= 0; i-- {
		if !isRule(rows[i]) {
			continue
		}
		if last < 0 {
			last = i
			continue
		}
		var held []string
		for _, r := range rows[i+1 : last] {
			held = appendText(held, strings.TrimSpace(r))
		}
		return held, true
	}
	return nil, false
}

func (sig ScreenSig) lastPrompt(rows []string) ([]string, bool) {
	first, end, ok := sig.lastPromptRows(rows)
	if !ok {
		return nil, false
	}
	head, _ := sig.cutPrompt(rows[first])
	held := appendText(nil, head)
	for _, r := range rows[first+1 : end] {
		held = appendText(held, strings.TrimSpace(r))
	}
	return held, true
}

// lastPromptRows finds LayoutLastPrompt's composer: the last prompt row
// under the last rule, and the continuation rows (at ContIndent) under it,
// rows[first:end].
func (sig ScreenSig) lastPromptRows(rows []string) (first, end int, ok bool) {
	start := 0
	for i := len(rows) - 1; i >= 0; i-- {
		if isRule(rows[i]) {
			start = i + 1
			break
		}
	}
	for i := len(rows) - 1; i >= start; i-- {
		if _, ok := sig.cutPrompt(rows[i]); !ok {
			continue
		}
		end := i + 1
		for end < len(rows) && sig.ContIndent != "" && strings.HasPrefix(rows[end], sig.ContIndent) && !sig.footer(rows[end]) {
			end++
		}
		return i, end, true
	}
	return 0, 0, false
}

// footer reports a row under the composer that is chrome, not held text:
// codex's status row names the worktree after a " · ".
func (sig ScreenSig) footer(row string) bool {
	return strings.Contains(row, " · ") && strings.Contains(row, "/")
}

func barBlock(rows []string) ([]string, bool) {
	for i := len(rows) - 1; i > 0; i-- {
		if !strings.HasPrefix(strings.TrimSpace(rows[i]), "╹▀") {
			continue
		}
		// rows[i-1] is the model line; the composer's rows are the ┃
		// rows above it.
		var block []string
		for j := i - 2; j >= 0; j-- {
			t := strings.TrimSpace(rows[j])
			if !strings.HasPrefix(t, "┃") {
				break
			}
			if len(t) > len("┃") && strings.HasSuffix(t, "┃") {
				continue // a slash popup's boxed row, drawn over the composer
			}
			block = append([]string{leftColumn(strings.TrimPrefix(t, "┃"))}, block...)
		}
		var held []string
		for _, r := range block {
			held = appendText(held, r)
		}
		return held, strings.HasPrefix(strings.TrimSpace(rows[i-1]), "┃")
	}
	return nil, false
}

// leftColumn drops what opencode draws at the right of a composer row (the
// worktree and branch, wrapped onto the rows above the model line in a
// narrow pane): text after a wide run of spaces is another column.
func leftColumn(row string) string {
	if i := strings.Index(row, strings.Repeat(" ", 16)); i >= 0 {
		row = row[:i]
	}
	return strings.TrimSpace(row)
}

// trimRow strips a row's spaces and the zero-width space qwen draws as its
// cursor after the text, which is no part of what the composer holds.
func trimRow(s string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "\u200b"))
}

func appendText(held []string, s string) []string {
	if s == "" {
		return held
	}
	return append(held, s)
}
