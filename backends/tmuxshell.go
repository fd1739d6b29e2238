package backends

import (
	"context"
	"fmt"
	"strings"
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

func (t *Tmux) ClearShellLine(ctx context.Context, ep Endpoint) error {
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

// ShellLine returns the last non-blank line of the pane with wrapped rows
// joined (capture-pane -J): a shell's cursor sits on its input line, below
// everything it printed.
func (t *Tmux) ShellLine(ctx context.Context, ep Endpoint) (string, error) {
	pane, err := t.paneID(ctx, ep)
	if err != nil {
		return "", err
	}
	out, err := t.run(ctx, "capture-pane", "-p", "-J", "-t", pane)
	if err != nil {
		return "", fmt.Errorf("tmux capture-pane %s (%s): %w", ep.Target, pane, err)
	}
	lines := strings.Split(string(out.Stdout), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimRight(lines[i], " "); l != "" {
			return l, nil
		}
	}
	return "", nil
}
