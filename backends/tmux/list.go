package tmux

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"fmctl/backends"
	"fmctl/state"
)

// snapshotFormat is every pane on the server as lookup reads one, behind
// whether it is its window's active pane (the one list-windows reports).
const snapshotFormat = "#{pane_active}\t" + paneFormat

// leanSnapshotFormat is snapshotFormat without pane_current_command and
// pane_current_path, their fields left empty: tmux reads /proc for every
// pane to print those two, the larger part of a listing's time, and a
// pane with an agent leading its terminal (read from /proc here) needs
// neither.
const leanSnapshotFormat = "#{pane_active}\t#{window_name}\t#{pane_id}\t#{pane_pid}\t#{pane_tty}\t\t#{window_id}\t#{session_name}\t#{pane_dead}\t" + serverFormat + "\t"

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
	out, _ := t.agentStates(ctx, eps)
	return out
}

// agentStates is AgentStates, with the pane each endpoint was found at
// ("" where none was).
func (t *Adapter) agentStates(ctx context.Context, eps []backends.Endpoint) ([]backends.Observation, []string) {
	out, found := make([]backends.Observation, len(eps)), make([]string, len(eps))
	panes, err := t.snapshot(ctx)
	var infos []paneInfo
	if err == nil {
		infos = make([]paneInfo, len(eps))
		w := byWindow(panes)
		for i, ep := range eps {
			if info, ok := findInSnapshot(w, ep); ok {
				infos[i], found[i] = info, info.pane
			}
		}
	}
	var seen, alone []int // alone: endpoints the snapshot does not show plainly
	for i, ep := range eps {
		if found[i] == "" {
			alone = append(alone, i)
			continue
		}
		// The pane found is the endpoint's, as lookup's is: a capture of
		// it next (list's screens) needs no lookup of its own.
		t.remember(ep.Target, infos[i].pane)
		seen = append(seen, i)
	}
	// Each reads its processes (a few small files in /proc), which need
	// not wait for one another's.
	eachAtMost(classifiers, seen, func(i int) { out[i] = t.classify(ctx, infos[i]) })
	for _, i := range alone {
		out[i], found[i] = t.agentState(ctx, eps[i])
	}
	return out, found
}

// AgentStatesAndCaptures is AgentStates and the screens Captures reads,
// for a read of every task (list), in as few tmux calls as it can: the
// panes at the ids their records name (every pane fm-spawn made) are
// captured in the call that lists every pane (leanSnapshotFormat), so
// tmux's server walks its panes once and one client carries both. While
// tmux answers, this side reads the agent under each recorded pane pid
// from /proc; a pane the listing shows at its recorded id and pid, with an
// agent leading its terminal, is alive without another read. A screen is
// kept only where the listing finds the endpoint at the pane its record
// names. Any other endpoint is classified as AgentStates classifies it
// (the full snapshot, whose pane_current_command and pane_current_path
// decide what /proc cannot), and its screen read afterwards as Captures
// reads it, if an agent runs there; so is one whose batch failed (a pane
// gone ends tmux's command queue for the rest of the batch). A call that
// timed out is not made again (tmux is not answering): its screens are
// unread, and when it was the listing's, every endpoint is unreadable.
// errs[i] is set where screens[i] is not endpoint i's screen. An agent
// found alive from /proc carries no CurrentPath: its directory is read
// from /proc where it is wanted (task.AgentRecord).
func (t *Adapter) AgentStatesAndCaptures(ctx context.Context, eps []backends.Endpoint) ([]backends.Observation, []backends.Screen, []error) {
	screens, errs := make([]backends.Screen, len(eps)), make([]error, len(eps))
	recorded := make([]string, len(eps))
	for i, ep := range eps {
		if recorded[i] = ep.Field(state.KeyTmuxPane); recorded[i] == "" {
			errs[i] = errNoScreen
		}
	}
	under := make([]agentRead, len(eps))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.readAgentsUnder(ctx, eps, under)
	}()
	panes, listErr := t.capturePanes(ctx, eps, recorded, screens, errs, false, true)
	<-done
	obs, found := t.classifyListed(ctx, eps, panes, listErr, under)
	var again []int
	for i := range eps {
		_, hung := backends.MayHaveRun(errs[i])
		switch {
		case hung:
		case errs[i] == nil && found[i] == recorded[i]:
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
		t.capturePanes(ctx, sub, panes, s, e, true, false)
		for k, i := range again {
			screens[i], errs[i] = s[k], e[k]
		}
	}
	return obs, screens, errs
}

// agentRead is the agent under a recorded pane pid, read from /proc.
type agentRead struct {
	pid int
	obs backends.Observation
	ok  bool
}

// readAgentsUnder reads the agent under each endpoint's recorded pane pid
// into under, one after another. It runs beside the tmux call, which is
// list's path, and ends long before it: reads at once would only take
// processor time from the tmux server answering that call.
func (t *Adapter) readAgentsUnder(ctx context.Context, eps []backends.Endpoint, under []agentRead) {
	for i, ep := range eps {
		pid, err := strconv.Atoi(ep.Field(state.KeyTmuxPanePID))
		if err == nil && pid > 0 && ep.Field(state.KeyTmuxPane) != "" {
			under[i].pid = pid
			under[i].obs, _, under[i].ok = t.agentUnder(ctx, pid)
		}
	}
}

// eachAtMost runs f for each index of is, limit at a time, and returns
// when every one has.
func eachAtMost(limit int, is []int, f func(i int)) {
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, i := range is {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			f(i)
		}()
	}
	wg.Wait()
}

// classifyListed classifies eps from the lean listing panes: an endpoint
// it shows plainly (findInSnapshot), live, with an agent leading its
// terminal (read beside the call at the recorded pid, or now at another),
// is alive; every other endpoint is left to AgentStates. When the listing
// was not read, every endpoint is AgentStates', unless its call timed out:
// tmux is not answering, and asking again would only add a wait.
func (t *Adapter) classifyListed(ctx context.Context, eps []backends.Endpoint, panes []snapPane, listErr error, under []agentRead) ([]backends.Observation, []string) {
	out, found := make([]backends.Observation, len(eps)), make([]string, len(eps))
	if _, hung := backends.MayHaveRun(listErr); hung {
		for i := range eps {
			out[i] = observeLookupErr(serverErr("tmux list-panes -a", listErr.Error()))
		}
		return out, found
	}
	var rest []int
	w := byWindow(panes)
	for i, ep := range eps {
		info, ok := findInSnapshot(w, ep)
		if listErr != nil || !ok || info.dead {
			rest = append(rest, i)
			continue
		}
		obs, alive := under[i].obs, under[i].ok && under[i].pid == info.pid
		if !alive && under[i].pid != info.pid {
			obs, _, alive = t.agentUnder(ctx, info.pid)
		}
		if !alive {
			rest = append(rest, i)
			continue
		}
		t.remember(ep.Target, info.pane)
		out[i], found[i] = obs, info.pane
	}
	if len(rest) > 0 {
		sub := make([]backends.Endpoint, len(rest))
		for k, i := range rest {
			sub[k] = eps[i]
		}
		obs, at := t.agentStates(ctx, sub)
		for k, i := range rest {
			out[i], found[i] = obs[k], at[k]
		}
	}
	return out, found
}

// classifiers bounds the panes whose processes are read at once.
const classifiers = 8

func (t *Adapter) snapshot(ctx context.Context) ([]snapPane, error) {
	res, err := t.run(ctx, "list-panes", "-a", "-F", snapshotFormat)
	if err != nil {
		return nil, err
	}
	var panes []snapPane
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		if p, ok := parseSnapLine(line); ok {
			panes = append(panes, p)
		}
	}
	return panes, nil
}

// parseSnapLine reads one pane of the snapshot, full or lean.
func parseSnapLine(line string) (snapPane, bool) {
	active, rest, _ := strings.Cut(line, "\t")
	info, ok := parsePaneLine(rest)
	return snapPane{active: active == "1", info: info}, ok
}

// windows is a snapshot's panes by session and window name, so an
// endpoint is looked for among its own window's panes, not among every
// pane on the server (at 500 tasks, 250,000 comparisons a list).
type windows map[[2]string][]snapPane

func byWindow(panes []snapPane) windows {
	w := make(windows, len(panes))
	for _, p := range panes {
		k := [2]string{p.info.session, p.info.window}
		w[k] = append(w[k], p)
	}
	return w
}

// findInSnapshot resolves an endpoint as lookup would, succeeding only when
// the answer is one plain pane: the recorded pane id in the recorded
// session:window, or else the one active pane of the one window carrying
// the label.
func findInSnapshot(w windows, ep backends.Endpoint) (paneInfo, bool) {
	session, window, err := SplitTarget(ep.Target)
	if err != nil {
		return paneInfo{}, false
	}
	id := ep.Field(state.KeyTmuxPane)
	var found []paneInfo
	for _, p := range w[[2]string{session, window}] {
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
// length allows: each call first lists every pane's id, height and cursor
// (one cheap list-panes line a pane, behind a nonce of this call), then
// captures each pane, whose rows are cut from the output by the heights
// listed. tmux runs one command line's commands back to back, with no
// pane output read between them, so the heights are the captures' own.
// When a call fails (a pane gone mid-chain ends tmux's command queue),
// each of its endpoints takes the single capture, whose error names it;
// when one timed out, tmux is not answering, and one more bounded call per
// endpoint (or per batch) would only multiply the wait, so the screens of
// that batch and of every batch not yet started are unread.
func (t *Adapter) Captures(ctx context.Context, eps []backends.Endpoint) ([]backends.Screen, []error) {
	screens, errs := make([]backends.Screen, len(eps)), make([]error, len(eps))
	panes := make([]string, len(eps))
	for i, ep := range eps {
		panes[i], errs[i] = t.paneID(ctx, ep)
	}
	t.capturePanes(ctx, eps, panes, screens, errs, true, false)
	return screens, errs
}

// errBatchFailed marks a screen a batched capture did not read because the
// call failed, where its endpoints are not to take single captures.
var errBatchFailed = errors.New("the batched capture failed")

// capturePanes reads the screens of panes into screens and errs, skipping
// each endpoint whose errs is already set. A failed call's endpoints take
// the single capture when single is set, else errBatchFailed. With
// listing, the first call lists every pane as the lean snapshot too (even
// with nothing to capture), returned with that call's error.
func (t *Adapter) capturePanes(ctx context.Context, eps []backends.Endpoint, panes []string, screens []backends.Screen, errs []error, single, listing bool) ([]snapPane, error) {
	nonce := screenNonce()
	var batches [][]int // endpoints, by index, one call each
	size := 0
	if listing {
		batches, size = [][]int{nil}, argvBytes(batchHead(nonce, true))
	}
	for i := range eps {
		if errs[i] != nil {
			continue
		}
		n := argvBytes(captureWords(panes[i]))
		if len(batches) == 0 || size+n > captureCallBytes {
			batches, size = append(batches, nil), argvBytes(batchHead(nonce, false))
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
	var listed []snapPane
	listErr := errors.New("the listing was not made")
	for b, batch := range batches {
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
			first := listing && b == 0
			l, err := t.captureBatch(ctx, eps, panes, batch, nonce, screens, errs, single, first)
			mu.Lock()
			defer mu.Unlock()
			if _, timedOut := backends.MayHaveRun(err); timedOut {
				hung = err
			}
			if first {
				listed, listErr = l, err
			}
		}()
	}
	wg.Wait()
	return listed, listErr
}

// batchHead opens a batched capture: every pane's id as tmux names it,
// its height and its cursor, a line each behind the nonce. It costs tmux
// far less than a display-message a pane, which took nearly as long as the
// capture itself (and its words put 500 panes in 3 calls, not 1). With
// listing, each line also carries the pane as the lean snapshot lists it,
// behind a tab (the geometry has none), and the nonce alone on a line
// ends the head (cutHead): a window name may hold a newline.
func batchHead(nonce string, listing bool) []string {
	format := nonce + " #D #{pane_height} #{cursor_y} #{cursor_x}"
	if !listing {
		return []string{"list-panes", "-a", "-F", format, ";"}
	}
	return []string{"list-panes", "-a", "-F", format + "\t" + leanSnapshotFormat, ";", "display-message", "-p", nonce, ";"}
}

// captureWords read one pane's rows in a batch, the command ended by
// tmux's separator.
func captureWords(pane string) []string {
	return []string{"capture-pane", "-p", "-t", pane, ";"}
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
// into screens and errs, and returns the call's error; with listing, also
// the panes its head listed (listing's batchHead).
func (t *Adapter) captureBatch(ctx context.Context, eps []backends.Endpoint, panes []string, batch []int, nonce string, screens []backends.Screen, errs []error, single, listing bool) ([]snapPane, error) {
	args := batchHead(nonce, listing)
	for _, i := range batch {
		args = append(args, captureWords(panes[i])...)
	}
	out, err := t.run(ctx, args[:len(args)-1]...)
	if _, hung := backends.MayHaveRun(err); hung {
		for _, i := range batch {
			errs[i] = fmt.Errorf("tmux capture-pane %s (%s): %w", eps[i].Target, panes[i], err)
		}
		return nil, err
	}
	if err != nil {
		for _, i := range batch {
			if single {
				screens[i], errs[i] = t.Capture(ctx, eps[i])
			} else {
				errs[i] = fmt.Errorf("tmux capture-pane %s (%s): %w: %w", eps[i].Target, panes[i], errBatchFailed, err)
			}
		}
		return nil, err
	}
	order := make([]string, len(batch))
	for k, i := range batch {
		order[k] = panes[i]
	}
	byPane, listed := splitCaptures(string(out.Stdout), nonce, order, listing)
	for _, i := range batch {
		if s, ok := byPane[panes[i]]; ok {
			screens[i] = s
		} else {
			errs[i] = fmt.Errorf("tmux capture-pane %s (%s): the batched capture printed no screen for it", eps[i].Target, panes[i])
		}
	}
	return listed, nil
}

// splitCaptures cuts the batched output: its head lines (the nonce, a
// pane's id, height and cursor, and with listing, behind a tab, the pane
// as the lean snapshot lists it, returned as listed) come first, then the
// rows of the panes captured, in order, each as many as its height.
// Output that does not add up to the heights listed (it cannot, from one
// command line) gives no screen at all rather than a pane another's rows.
// The parts are sliced from out, not copied: at 500 panes out is some
// megabytes.
func splitCaptures(out, nonce string, order []string, listing bool) (map[string]backends.Screen, []snapPane) {
	type geometry struct {
		rows   int
		cursor string
	}
	heads, at, ok := cutHead(out, nonce, listing)
	if !ok {
		return nil, nil
	}
	geometries := map[string]geometry{}
	var listed []snapPane
	for _, head := range heads {
		geo, pane, hasPane := strings.Cut(head, "\t")
		if hasPane {
			if p, ok := parseSnapLine(pane); ok {
				listed = append(listed, p)
			}
		}
		f := strings.SplitN(geo, " ", 3)
		if len(f) == 3 {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				geometries[f[0]] = geometry{rows: n, cursor: f[2]}
			}
		}
	}
	screens := map[string]backends.Screen{}
	for _, pane := range order {
		g, ok := geometries[pane]
		if !ok {
			return nil, listed
		}
		end := at
		for range g.rows {
			nl := strings.IndexByte(out[end:], '\n')
			if nl < 0 {
				return nil, listed
			}
			end += nl + 1
		}
		screens[pane] = screenOf(g.cursor, out[at:end])
		at = end
	}
	if at != len(out) {
		return nil, listed
	}
	return screens, listed
}

// cutHead reads the head of a batched capture: each line behind the
// nonce, without it, and where the rows begin. Without listing the head
// is the leading lines behind the nonce. With listing it ends at the line
// that is the nonce alone (batchHead's), and a line between not behind the
// nonce continues the one before it: tmux prints a window name given
// at its creation (new-window -n) raw, a newline in it included, and
// such a window of anyone's on the server must not end the head early.
// A listing head with no end line gives nothing (ok false).
func cutHead(out, nonce string, listing bool) (heads []string, at int, ok bool) {
	marker := nonce + " "
	for at < len(out) {
		line, _, _ := strings.Cut(out[at:], "\n")
		next := min(at+len(line)+1, len(out))
		rest, behind := strings.CutPrefix(line, marker)
		switch {
		case listing && line == nonce:
			return heads, next, true
		case behind:
			heads = append(heads, rest)
		case !listing:
			return heads, at, true
		case len(heads) > 0:
			heads[len(heads)-1] += "\n" + line
		}
		at = next
	}
	return heads, at, !listing
}
