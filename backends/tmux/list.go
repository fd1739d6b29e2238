package tmux

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"fmctl/backends"
)

// snapshotFormat is every pane on the server as lookup reads one, behind
// whether it is its window's active pane (the one list-windows reports).
const snapshotFormat = "#{pane_active}\t" + paneFormat

type snapPane struct {
	active bool
	info   paneInfo
}

// AgentStates reads every pane on the server in one `list-panes -a` call and
// classifies each endpoint from it. An endpoint the snapshot does not show
// plainly (no pane, several, or one whose recorded id sits elsewhere) takes
// the single-endpoint read, so its verdict and its words are AgentState's
// own; so does every endpoint when the list call fails.
func (t *Adapter) AgentStates(ctx context.Context, eps []backends.Endpoint) []backends.Observation {
	out := make([]backends.Observation, len(eps))
	panes, err := t.snapshot(ctx)
	for i, ep := range eps {
		if info, ok := findInSnapshot(panes, ep); err == nil && ok {
			out[i] = t.classify(ctx, info)
			continue
		}
		out[i] = t.AgentState(ctx, ep)
	}
	return out
}

func (t *Adapter) snapshot(ctx context.Context) ([]snapPane, error) {
	res, err := t.run(ctx, "list-panes", "-a", "-F", snapshotFormat)
	if err != nil {
		return nil, err
	}
	var panes []snapPane
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		active, rest, _ := strings.Cut(line, "\t")
		if info, ok := parsePaneLine(rest); ok {
			panes = append(panes, snapPane{active: active == "1", info: info})
		}
	}
	return panes, nil
}

// findInSnapshot resolves an endpoint as lookup would, succeeding only when
// the answer is one plain pane: the recorded pane id in the recorded
// session:window, or else the one active pane of the one window carrying
// the label.
func findInSnapshot(panes []snapPane, ep backends.Endpoint) (paneInfo, bool) {
	session, window, err := SplitTarget(ep.Target)
	if err != nil {
		return paneInfo{}, false
	}
	id := ep.Field(KeyTmuxPane)
	var found []paneInfo
	for _, p := range panes {
		if p.info.session != session || p.info.window != window {
			continue
		}
		if (id != "" && p.info.pane == id) || (id == "" && p.active) {
			found = append(found, p.info)
		}
	}
	if len(found) != 1 {
		return paneInfo{}, false
	}
	return found[0], true
}

// History captures the pane's last lines, scrollback included: capture-pane
// -S -N starts N lines back in the history. tmux prints cell text only, and
// trailing blank rows of the screen are dropped before the last lines are
// taken.
func (t *Adapter) History(ctx context.Context, ep backends.Endpoint, lines int) ([]string, error) {
	pane, err := t.paneID(ctx, ep)
	if err != nil {
		return nil, err
	}
	out, err := t.run(ctx, "capture-pane", "-p", "-J", "-S", "-"+strconv.Itoa(lines), "-t", pane)
	if err != nil {
		return nil, fmt.Errorf("tmux capture-pane %s (%s): %w", ep.Target, pane, err)
	}
	return backends.LastLines(string(out.Stdout), lines), nil
}
