package tmux

import (
	"context"
	"fmt"
	"strings"

	"fmctl/backends"
)

// ShellLineClear empties a shell's input line wherever its cursor is: C-e
// moves to the end of the line, then C-u kills back to its start. Verified
// against the pane shells fmctl meets (tests/realtmux, TestShellLineClear):
// bash (readline end-of-line, unix-line-discard), zsh (zle end-of-line,
// kill-whole-line), fish (end-of-line, backward-kill-line; C-e also accepts
// an autosuggestion, which C-u then kills) and dash, which has no line
// editor, where the terminal's canonical mode takes ^E as a character and
// C-u (VKILL) erases the whole line with it. C-u alone would leave whatever
// sits right of the cursor; C-c would also clear, but it is an interrupt.
var ShellLineClear = []string{"C-e", "C-u"}

func (t *Adapter) ClearShellLine(ctx context.Context, ep backends.Endpoint) error {
	pane, err := t.paneID(ctx, ep)
	if err != nil {
		return err
	}
	args := append([]string{"send-keys", "-t", pane}, ShellLineClear...)
	if _, err := t.run(ctx, args...); err != nil {
		return fmt.Errorf("tmux clear the shell line of %s (%s): %w", ep.Target, pane, err)
	}
	return nil
}

// ShellRows returns the pane's rows without the blank ones below the last
// text: a shell's input line is at the bottom of what it drew. Rows the
// terminal wrapped are joined (capture-pane -J, trailing spaces kept);
// a line editor that breaks rows itself (zsh) leaves them apart, so the
// caller joins the tail rows as it needs.
func (t *Adapter) ShellRows(ctx context.Context, ep backends.Endpoint) ([]string, error) {
	pane, err := t.paneID(ctx, ep)
	if err != nil {
		return nil, err
	}
	out, err := t.run(ctx, "capture-pane", "-p", "-J", "-t", pane)
	if err != nil {
		return nil, fmt.Errorf("tmux capture-pane %s (%s): %w", ep.Target, pane, err)
	}
	rows := strings.Split(string(out.Stdout), "\n")
	for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
		rows = rows[:len(rows)-1]
	}
	if len(rows) > 0 {
		rows[len(rows)-1] = strings.TrimRight(rows[len(rows)-1], " ")
	}
	return rows, nil
}
