package tmux

import (
	"context"
	"fmt"
	"strconv"
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

// ShellRows returns the pane's rows from its top down to the cursor's row,
// without blank rows at the bottom. A shell's input line is the cursor's
// row and the rows above it that it wraps from; rows below the cursor are
// not (seen in CI: opencode 1.18.33, exiting, printed a stack trace below
// the row bash then drew its prompt on, and the last row with text was the
// trace's). Rows the terminal wrapped are joined (capture-pane -J, trailing
// spaces kept, so a launch line wrapped at a space reads whole); a line
// editor that breaks rows itself (zsh) leaves them apart, so the caller
// joins the tail rows as it needs.
//
// The cursor is read in the same tmux invocation as the rows, so both are
// of one moment. Joined rows are no longer screen rows, so the cursor's
// row can be found in the first read, of the whole screen, only when
// nothing was joined or the cursor is on the last row; otherwise the
// next read ends at the cursor's row (capture-pane -E) and holds if the
// cursor was still there.
func (t *Adapter) ShellRows(ctx context.Context, ep backends.Endpoint) ([]string, error) {
	pane, err := t.paneID(ctx, ep)
	if err != nil {
		return nil, err
	}
	end := "-" // the end of the visible pane
	for range shellRowsReads {
		out, err := t.run(ctx, "display-message", "-p", "-t", pane, "#{cursor_y} #{pane_height}", ";",
			"capture-pane", "-p", "-J", "-E", end, "-t", pane)
		if err != nil {
			return nil, fmt.Errorf("tmux capture-pane %s (%s): %w", ep.Target, pane, err)
		}
		c, err := parseShellCapture(out.Stdout)
		if err != nil {
			return nil, fmt.Errorf("tmux capture-pane %s (%s): %w", ep.Target, pane, err)
		}
		if rows, ok := c.toCursor(end); ok {
			return rows, nil
		}
		end = strconv.Itoa(c.cursorY)
	}
	return nil, fmt.Errorf("tmux capture-pane %s (%s): the cursor had moved on by each of %d reads", ep.Target, pane, shellRowsReads)
}

// shellRowsReads bounds the reads of a cursor that keeps moving: output
// still arriving, which a shell waiting at its prompt does not draw.
const shellRowsReads = 3

// shellCapture is one read of `display-message '#{cursor_y} #{pane_height}'
// ; capture-pane -p -J`: the cursor's screen row, the pane's height in
// rows, and the captured rows, wrapped ones joined.
type shellCapture struct {
	cursorY, height int
	rows            []string
}

func parseShellCapture(out []byte) (shellCapture, error) {
	first, rest, _ := strings.Cut(string(out), "\n")
	var c shellCapture
	if _, err := fmt.Sscanf(first, "%d %d", &c.cursorY, &c.height); err != nil {
		return shellCapture{}, fmt.Errorf("read the cursor's row from %q: %w", first, err)
	}
	// capture-pane -p ends its last row with one newline; rows before it
	// that are blank are screen rows too, and count.
	if rest != "" {
		c.rows = strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
	}
	return c, nil
}

// toCursor returns the captured rows down to the cursor's, given the end
// row the capture was asked for, and whether the capture shows where the
// cursor's row is: it ended there, or (the whole screen) the cursor is on
// the last row, or no row was joined, so each row is one screen row.
func (c shellCapture) toCursor(end string) ([]string, bool) {
	rows := c.rows
	switch {
	case end == strconv.Itoa(c.cursorY):
	case end == "-" && c.cursorY == c.height-1:
	case end == "-" && len(rows) == c.height && c.cursorY < len(rows):
		rows = rows[:c.cursorY+1]
	default:
		return nil, false
	}
	return withoutBlankBottom(rows), true
}

// withoutBlankBottom drops the blank rows at the bottom, and the trailing
// spaces -J keeps from the last row left.
func withoutBlankBottom(rows []string) []string {
	for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
		rows = rows[:len(rows)-1]
	}
	if len(rows) > 0 {
		rows[len(rows)-1] = strings.TrimRight(rows[len(rows)-1], " ")
	}
	return rows
}
