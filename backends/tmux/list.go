package tmux

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

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
	out, _ := t.agentStates(ctx, eps, nil)
	return out
}

// agentStates is AgentStates, with the pane each endpoint was found at
// ("" where none was). snapped, unless nil, is given the panes the
// snapshot shows plainly (by endpoint, "" for the others) before they are
// classified.
func (t *Adapter) agentStates(ctx context.Context, eps []backends.Endpoint, snapped func(found []string)) ([]backends.Observation, []string) {
	out, found := make([]backends.Observation, len(eps)), make([]string, len(eps))
	panes, err := t.snapshot(ctx)
	var infos []paneInfo
	if err == nil {
		infos = make([]paneInfo, len(eps))
		for i, ep := range eps {
			if info, ok := findInSnapshot(panes, ep); ok {
				infos[i], found[i] = info, info.pane
			}
		}
	}
	if snapped != nil {
		snapped(slices.Clone(found))
	}
	// The panes found are classified a few at a time: each reads its
	// processes (a few small files in /proc), which need not wait for
	// one another's.
	slots := make(chan struct{}, classifiers)
	var wg sync.WaitGroup
	var alone []int // endpoints the snapshot does not show plainly
	for i, ep := range eps {
		if found[i] == "" {
			alone = append(alone, i)
			continue
		}
		info := infos[i]
		// The pane found is the endpoint's, as lookup's is: a capture of
		// it next (list's screens) needs no lookup of its own.
		t.mu.Lock()
		t.pane[ep.Target] = info.pane
		t.mu.Unlock()
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			out[i] = t.classify(ctx, info)
		}()
	}
	wg.Wait()
	for _, i := range alone {
		out[i], found[i] = t.agentState(ctx, eps[i])
	}
	return out, found
}

// AgentStatesAndCaptures is AgentStates and the screens Captures reads,
// for a read of every task (list), with the captures made while the panes
// are classified rather than after: the panes the snapshot shows at the
// ids their records name (every pane fm-spawn made) are captured as soon
// as it is read, tmux's server capturing while this side reads /proc. A
// screen is kept only where its endpoint's pane is the one its marker
// names (#D, the id tmux read). Any other endpoint (a record without a
// pane id, one the snapshot does not show plainly), and one whose batch
// failed (a pane gone since the snapshot ends tmux's command queue for
// the rest of the batch), is read afterwards as Captures reads it, if an
// agent runs there; one whose batch timed out is not read again (tmux is
// not answering). errs[i] is set where screens[i] is not endpoint i's
// screen.
func (t *Adapter) AgentStatesAndCaptures(ctx context.Context, eps []backends.Endpoint) ([]backends.Observation, []backends.Screen, []error) {
	screens, errs := make([]backends.Screen, len(eps)), make([]error, len(eps))
	var snapped []string
	done := make(chan struct{})
	obs, found := t.agentStates(ctx, eps, func(panes []string) {
		snapped = panes
		for i, ep := range eps {
			if snapped[i] == "" || snapped[i] != ep.Field(state.KeyTmuxPane) {
				snapped[i], errs[i] = "", errNoScreen
			}
		}
		go func() {
			defer close(done)
			t.capturePanes(ctx, eps, snapped, screens, errs, false)
		}()
	})
	<-done
	var again []int
	for i := range eps {
		_, hung := backends.MayHaveRun(errs[i])
		switch {
		case hung:
		case errs[i] == nil && found[i] == snapped[i]:
		case found[i] != "" && (obs[i].State == backends.StateAlive || obs[i].State == backends.StateUnverified):
			screens[i], errs[i] = backends.Screen{}, nil
			again = append(again, i)
		default:
			screens[i], errs[i] = backends.Screen{}, errNoScreen
		}
	}
	if len(again) > 0 {
		sub, panes := make([]backends.Endpoint, len(again)), make([]string, len(again))
		for k, i := range again {
			sub[k], panes[k] = eps[i], found[i]
		}
		s, e := make([]backends.Screen, len(again)), make([]error, len(again))
		t.capturePanes(ctx, sub, panes, s, e, true)
		for k, i := range again {
			screens[i], errs[i] = s[k], e[k]
		}
	}
	return obs, screens, errs
}

// classifiers bounds the panes AgentStates classifies at once.
const classifiers = 8

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

// captureCallBytes bounds the words of one batched capture: tmux's client
// sends its command line in one message of at most 16 KiB, header
// included, and refuses a longer one ("command too long"), which would
// leave every screen to a call of its own.
const captureCallBytes = 16000

// captureCalls bounds the batched captures in flight at once.
const captureCalls = 4

// Captures reads the screens of eps in as few tmux calls as the command
// length allows: for each pane its cursor, behind a marker line naming the
// pane, then its rows. The marker carries a nonce of this call, so no row
// a pane shows can pose as one. When a call fails (a pane gone mid-chain
// ends tmux's command queue), each of its endpoints takes the single
// capture, whose error names it; when one timed out, tmux is not
// answering, and one more bounded call per endpoint (or per batch) would
// only multiply the wait, so the screens of that batch and of every batch
// not yet started are unread.
func (t *Adapter) Captures(ctx context.Context, eps []backends.Endpoint) ([]backends.Screen, []error) {
	screens, errs := make([]backends.Screen, len(eps)), make([]error, len(eps))
	panes := make([]string, len(eps))
	for i, ep := range eps {
		panes[i], errs[i] = t.paneID(ctx, ep)
	}
	t.capturePanes(ctx, eps, panes, screens, errs, true)
	return screens, errs
}

// errBatchFailed marks a screen a batched capture did not read because the
// call failed, where its endpoints are not to take single captures.
var errBatchFailed = errors.New("the batched capture failed")

// capturePanes reads the screens of panes into screens and errs, skipping
// each endpoint whose errs is already set. A failed call's endpoints take
// the single capture when single is set, else errBatchFailed.
func (t *Adapter) capturePanes(ctx context.Context, eps []backends.Endpoint, panes []string, screens []backends.Screen, errs []error, single bool) {
	nonce := screenNonce()
	var batches [][]int // endpoints, by index, one call each
	size := 0
	for i := range eps {
		if errs[i] != nil {
			continue
		}
		n := argvBytes(captureWords(panes[i], nonce))
		if len(batches) == 0 || size+n > captureCallBytes {
			batches, size = append(batches, nil), 0
		}
		batches[len(batches)-1] = append(batches[len(batches)-1], i)
		size += n
	}
	// The calls overlap, a few at a time: tmux's server answers one at a
	// time, but each client's start and this side's parsing need not wait.
	slots := make(chan struct{}, captureCalls)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var hung error
	for _, batch := range batches {
		slots <- struct{}{}
		mu.Lock()
		stop := hung
		mu.Unlock()
		if stop != nil {
			<-slots
			for _, i := range batch {
				errs[i] = fmt.Errorf("tmux capture-pane %s (%s): %w", eps[i].Target, panes[i], stop)
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := t.captureBatch(ctx, eps, panes, batch, nonce, screens, errs, single); err != nil {
				mu.Lock()
				hung = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// captureWords read one pane in a batch: its marker and cursor, then its
// rows, each command ended by tmux's separator. They are as short as tmux
// spells them (display-message's alias, its flags joined, #D for the
// pane's id as tmux itself names the pane it read), since the batch is
// cut at captureCallBytes: at 500 panes 3 calls, not 4. capture-pane keeps
// the words a reader of a trace (and the bench) looks for.
func captureWords(pane, nonce string) []string {
	return []string{"display", "-pt" + pane, nonce + " #D #{cursor_y} #{cursor_x}", ";", "capture-pane", "-p", "-t", pane, ";"}
}

// screenNonce is a batched capture's marker: random, so no row a pane
// shows can pose as one, and short, since every pane's words carry it.
func screenNonce() string {
	return "fm" + strconv.FormatUint(rand.Uint64(), 36)
}

// argvBytes is what words take in tmux's command message: each, and its NUL.
func argvBytes(words []string) int {
	n := 0
	for _, w := range words {
		n += len(w) + 1
	}
	return n
}

// captureBatch reads the screens of the endpoints at batch in one call,
// into screens and errs; it returns the call's error when it timed out.
func (t *Adapter) captureBatch(ctx context.Context, eps []backends.Endpoint, panes []string, batch []int, nonce string, screens []backends.Screen, errs []error, single bool) error {
	var args []string
	for _, i := range batch {
		args = append(args, captureWords(panes[i], nonce)...)
	}
	out, err := t.run(ctx, args[:len(args)-1]...)
	if _, hung := backends.MayHaveRun(err); hung {
		for _, i := range batch {
			errs[i] = fmt.Errorf("tmux capture-pane %s (%s): %w", eps[i].Target, panes[i], err)
		}
		return err
	}
	if err != nil {
		for _, i := range batch {
			if single {
				screens[i], errs[i] = t.Capture(ctx, eps[i])
			} else {
				errs[i] = fmt.Errorf("tmux capture-pane %s (%s): %w: %w", eps[i].Target, panes[i], errBatchFailed, err)
			}
		}
		return nil
	}
	byPane := splitCaptures(string(out.Stdout), nonce)
	for _, i := range batch {
		if s, ok := byPane[panes[i]]; ok {
			screens[i] = s
		} else {
			errs[i] = fmt.Errorf("tmux capture-pane %s (%s): the batched capture printed no screen for it", eps[i].Target, panes[i])
		}
	}
	return nil
}

// splitCaptures cuts the batched output at its marker lines: each starts
// a pane's part, its cursor the marker's tail and its rows what follows.
// The parts are sliced from out, not copied: at 500 panes out is some
// megabytes.
func splitCaptures(out, nonce string) map[string]backends.Screen {
	screens := map[string]backends.Screen{}
	marker := nonce + " "
	var pane, cursor string
	rows := -1 // where the current part's rows start in out
	flush := func(end int) {
		if pane != "" && rows >= 0 {
			screens[pane] = screenOf(cursor, out[rows:end])
		}
	}
	for at := 0; at < len(out); {
		line, _, _ := strings.Cut(out[at:], "\n")
		next := min(at+len(line)+1, len(out))
		if rest, ok := strings.CutPrefix(line, marker); ok {
			flush(at)
			pane, cursor, _ = strings.Cut(rest, " ")
			rows = next
		}
		at = next
	}
	flush(len(out))
	return screens
}
