package tmux

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/state"
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
			// The pane found is the endpoint's, as lookup's is: a capture
			// of it next (list's screens) needs no lookup of its own.
			t.mu.Lock()
			t.pane[ep.Target] = info.pane
			t.mu.Unlock()
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
	id := ep.Field(state.KeyTmuxPane)
	var found []paneInfo
	for _, p := range panes {
		if p.info.session != session || p.info.window != window {
			continue
		}
		if (id != "" && p.info.pane == id && notTheRecordedPane(ep, p.info) == "") || (id == "" && p.active && !notSameServer(ep, p.info)) {
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

// Captures reads the screens of eps in one tmux call: for each pane its
// cursor, behind a marker line naming the pane, then its rows. The marker
// carries a nonce of this call, so no row a pane shows can pose as one.
// When the call fails (a pane gone mid-chain ends tmux's command queue),
// each endpoint takes the single capture, whose error names it; when it
// timed out, tmux is not answering, and one more bounded call per
// endpoint would only multiply the wait, so every screen is unread.
func (t *Adapter) Captures(ctx context.Context, eps []backends.Endpoint) ([]backends.Screen, []error) {
	screens, errs := make([]backends.Screen, len(eps)), make([]error, len(eps))
	nonce := fmt.Sprintf("fmctl-screen-%d-%d", os.Getpid(), time.Now().UnixNano())
	var args []string
	panes := make([]string, len(eps))
	for i, ep := range eps {
		pane, err := t.paneID(ctx, ep)
		if err != nil {
			errs[i] = err
			continue
		}
		panes[i] = pane
		args = append(args, "display-message", "-p", "-t", pane, nonce+" "+pane+" #{cursor_y} #{cursor_x}", ";", "capture-pane", "-p", "-t", pane, ";")
	}
	if len(args) == 0 {
		return screens, errs
	}
	out, err := t.run(ctx, args[:len(args)-1]...)
	if _, hung := backends.MayHaveRun(err); hung {
		for i, pane := range panes {
			if pane != "" {
				errs[i] = fmt.Errorf("tmux capture-pane %s (%s): %w", eps[i].Target, pane, err)
			}
		}
		return screens, errs
	}
	if err != nil {
		for i, ep := range eps {
			if panes[i] != "" {
				screens[i], errs[i] = t.Capture(ctx, ep)
			}
		}
		return screens, errs
	}
	byPane := splitCaptures(string(out.Stdout), nonce)
	for i, pane := range panes {
		if pane == "" {
			continue
		}
		if s, ok := byPane[pane]; ok {
			screens[i] = s
		} else {
			errs[i] = fmt.Errorf("tmux capture-pane %s (%s): the batched capture printed no screen for it", eps[i].Target, pane)
		}
	}
	return screens, errs
}

// splitCaptures cuts the batched output at its marker lines: each starts
// a pane's part, its cursor the marker's tail and its rows what follows.
func splitCaptures(out, nonce string) map[string]backends.Screen {
	screens := map[string]backends.Screen{}
	var pane string
	var part strings.Builder
	flush := func() {
		if pane != "" {
			screens[pane] = parseCapture([]byte(part.String()))
		}
		part.Reset()
	}
	for _, line := range strings.SplitAfter(out, "\n") {
		if rest, ok := strings.CutPrefix(line, nonce+" "); ok {
			flush()
			id, cursor, _ := strings.Cut(rest, " ")
			pane = id
			part.WriteString(cursor)
			if !strings.HasSuffix(cursor, "\n") {
				part.WriteString("\n")
			}
			continue
		}
		part.WriteString(line)
	}
	flush()
	return screens
}
