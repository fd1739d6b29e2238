package tmux

import (
	"context"
	"fmt"
	"strings"

	"fmctl/backends"
)

// CallerSession is the session holding pane (the TMUX_PANE of the shell
// fmctl runs in), where a spawn from inside tmux puts its window unless a
// session is configured. An empty answer (tmux expands the format against
// no pane for an absent id) is an error, never the default session.
func (t *Adapter) CallerSession(ctx context.Context, pane string) (string, error) {
	if !strings.HasPrefix(pane, "%") {
		return "", fmt.Errorf("TMUX_PANE '%s' is not a tmux pane id", pane)
	}
	out, err := t.run(ctx, "display-message", "-p", "-t", pane, "#{session_name}")
	if err != nil {
		return "", fmt.Errorf("read the session of pane %s: %s", pane, backends.StderrOf(err))
	}
	s := strings.TrimSpace(string(out.Stdout))
	if s == "" {
		return "", fmt.Errorf("pane %s is in no session tmux can name", pane)
	}
	return s, nil
}
