package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/task"
	"fmctl/cmd/internal/termtext"
	"fmctl/config"
	"fmctl/phrase"
	"fmctl/state"
)

// listRow is one task as `fm-control list` shows it. Error is set for a
// record that could not be used; the other fields then hold what was read.
type listRow struct {
	ID       string `json:"id"`
	Harness  string `json:"harness,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Backend  string `json:"backend,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	State    string `json:"state,omitempty"`
	// Server is "gone" for an endpoint missing because its multiplexer
	// server is gone or was restarted (Observation.ServerGone).
	Server   string `json:"server,omitempty"`
	Activity string `json:"activity,omitempty"`
	// WaitingFor is the dialog a waiting agent waits at, as status says.
	WaitingFor string `json:"waiting_for,omitempty"`
	// Attention is "stalled" for a busy agent with no progress for
	// FM_STALL_AFTER, StalledFor how long in seconds, as status says.
	Attention  string `json:"attention,omitempty"`
	StalledFor int    `json:"stalled_for_s,omitempty"`
	Journal    string `json:"journal"`
	Error      string `json:"error,omitempty"`
}

// List shows every task in the home, without a lock and without writing.
// Endpoints are classified per backend in one batch where the adapter can
// (tmux: one list-panes call for all of them).
func (c *Controller) List(ctx context.Context) error {
	dir, rows, err := c.listRows(ctx)
	if err != nil {
		return err
	}
	return c.printList(dir, rows)
}

// listRows reads every task of the home, and names its state dir.
func (c *Controller) listRows(ctx context.Context) (string, []listRow, error) {
	home, err := config.ResolveHome("fm-control", c.tun.Home)
	var ids []string
	var listed map[string]bool
	switch {
	case err == nil:
		if ids, listed, err = recordIDs(home.State); err != nil {
			return "", nil, err
		}
	case newHome(home):
		// A home no task was ever spawned in holds no tasks: listing them
		// is an answer (none), not a failure.
	default:
		return "", nil, err
	}
	store := state.Store{Dir: home.State}
	read := readRecords(store, ids)
	if ids, err = c.authority().Visible(home, ids, read); err != nil {
		return "", nil, err
	}
	rows := make([]listRow, len(ids))
	targets := make([]*task.Target, len(ids))
	// The loads parse and check records, processor work each core can take
	// a share of while nothing else runs yet.
	striped(runtime.GOMAXPROCS(0), len(ids), func(i int) {
		id := ids[i]
		rows[i] = listRow{ID: id, Journal: journalPhase(store, id, listed)}
		if !state.ValidTaskID(id) {
			rows[i].Error = fmt.Sprintf("'%s.meta' is not named by a valid task id", phrase.Printable(id))
			return
		}
		t, err := c.load(home, id, read)
		if t != nil {
			rows[i].Harness, rows[i].Kind, rows[i].Backend = orNone(t.Family()), string(t.Kind), t.BackendName
			rows[i].Endpoint = t.Task.Record.Window()
		}
		if err != nil {
			rows[i].Error = err.Error()
			return
		}
		targets[i] = t
	})
	batches := map[string][]int{} // backend name -> rows to classify
	for i, t := range targets {
		if t != nil {
			batches[t.BackendName] = append(batches[t.BackendName], i)
		}
	}
	now := time.Now()
	for _, idx := range batches {
		obs, screens := observeAll(ctx, targets, idx)
		for k, i := range idx {
			rows[i].State = string(obs[k].State)
			if obs[k].ServerGone {
				rows[i].Server = "gone"
			}
			act := readActivity(targets[i], obs[k], now, c.waits, screens[k])
			rows[i].Activity, rows[i].WaitingFor = act.Word, act.For
			if st := stallOf(targets[i], obs[k], act.Word, now, c.tun.Control.StallAfter); st.Stalled {
				rows[i].Attention, rows[i].StalledFor = attentionStalled, int(st.For/time.Second)
			}
		}
	}
	return home.State, rows, nil
}

// striped runs f for every index below n, in up to workers goroutines
// that each take every workers-th index, and returns when all have.
func striped(workers, n int, f func(i int)) {
	var wg sync.WaitGroup
	for w := range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// readRecords reads the record of each valid id once, for the caller's
// authority and the load both: at 500 tasks, 500 reads fewer. A record
// that cannot be read is left out, for its load to read and name the fault.
func readRecords(store state.Store, ids []string) map[string][]byte {
	read := make(map[string][]byte, len(ids))
	for _, id := range ids {
		if !state.ValidTaskID(id) {
			continue
		}
		if data, err := state.ReadSmallFile(store.MetaPath(id), state.MaxRecordBytes); err == nil {
			read[id] = data
		}
	}
	return read
}

// load is task id's target, from its record's bytes where read holds them.
func (c *Controller) load(home config.Home, id string, read map[string][]byte) (*task.Target, error) {
	if data, ok := read[id]; ok {
		return c.tasks().LoadRead(home, id, data)
	}
	return c.tasks().Load(home, id)
}

// screenReaders bounds the captures list runs at once on a backend that
// reads one screen per call.
const screenReaders = 4

// readScreens reads the screens of the targets at idx (all on one
// backend) as status does, so list says what status says: a dialog drawn
// is waiting at once, a busy mark outranks an idle report. Only live
// agents of the task's own harness are read: in one call where the
// adapter can (tmux), else one capture each.
func readScreens(ctx context.Context, targets []*task.Target, idx []int, obs []backends.Observation) []screenView {
	out := make([]screenView, len(idx))
	var read []int // positions in idx whose screens are read
	var eps []backends.Endpoint
	for k, i := range idx {
		if _, ok := screenSig(targets[i], obs[k]); ok {
			read = append(read, k)
			eps = append(eps, targets[i].Endpoint)
		}
	}
	sr, ok := targets[idx[0]].Backend.(backends.ScreensReader)
	if len(read) == 0 || !ok {
		// One capture each, a few at a time: a fleet's captures overlap
		// without crowding the multiplexer.
		slots := make(chan struct{}, screenReaders)
		var wg sync.WaitGroup
		for _, k := range read {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slots <- struct{}{}
				defer func() { <-slots }()
				out[k] = readScreen(ctx, targets[idx[k]], obs[k])
			}()
		}
		wg.Wait()
		return out
	}
	screens, errs := sr.Captures(ctx, eps)
	for j, k := range read {
		if errs[j] == nil {
			out[k] = viewOfScreen(targets[idx[k]], obs[k], screens[j])
		}
	}
	return out
}

// viewOfScreen is what status reads on the screen of a target whose
// screen is read (screenSig).
func viewOfScreen(t *task.Target, obs backends.Observation, s backends.Screen) screenView {
	sig, _ := screenSig(t, obs)
	return viewOf(sig, sig.ReadScreen(s.Lines))
}

// observeAll classifies the targets at idx, all on one backend, with one
// adapter, and reads their screens (readScreens): both in one batch where
// the adapter can, the screens read beside the classification; else the
// classification in one batch where it can, else one read each, and the
// screens after it.
func observeAll(ctx context.Context, targets []*task.Target, idx []int) ([]backends.Observation, []screenView) {
	be := targets[idx[0]].Backend
	eps := make([]backends.Endpoint, len(idx))
	for k, i := range idx {
		eps[k] = targets[i].Endpoint
	}
	if ssr, ok := be.(backends.StatesScreensReader); ok {
		obs, screens, errs := ssr.AgentStatesAndCaptures(ctx, eps)
		views := make([]screenView, len(idx))
		for k, i := range idx {
			if _, read := screenSig(targets[i], obs[k]); read && errs[k] == nil {
				views[k] = viewOfScreen(targets[i], obs[k], screens[k])
			}
		}
		return obs, views
	}
	var obs []backends.Observation
	if sr, ok := be.(backends.StatesReader); ok {
		obs = sr.AgentStates(ctx, eps)
	} else {
		obs = make([]backends.Observation, len(eps))
		for k, ep := range eps {
			obs[k] = be.AgentState(ctx, ep)
		}
	}
	return obs, readScreens(ctx, targets, idx, obs)
}

// journalPhase is the relaunch journal's phase for a list: none, complete,
// failed:<phase>, torn (a running phase: in progress now, or left by a
// process that died, which recover settles), or unreadable. A journal the
// state dir's listing did not show is not opened: none, as a read just
// before it was written would say (at 500 tasks, 1,000 opens of files that
// are not there, before list's tmux call can start).
func journalPhase(store state.Store, id string, listed map[string]bool) string {
	if !state.ValidTaskID(id) {
		return "none"
	}
	if phase, ok := teardownPhase(store, id, listed); ok {
		return phase
	}
	path := store.Journal(id).Journal
	if unlisted(listed, path) {
		return "none"
	}
	j, err := state.ReadJournal(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "none"
	case err != nil:
		return "unreadable"
	case j.Phase == state.PhaseComplete, strings.HasPrefix(j.Phase, state.FailedPrefix):
		return j.Phase
	}
	return "torn"
}

// teardownPhase is teardown:<phase> for a task whose teardown journal is
// still in state/ (running now, or torn: recover settles it), which list and
// status show in place of the relaunch journal: the teardown refuses over
// an unsettled relaunch, so only a settled one can be hidden. listed is as
// journalPhase's.
func teardownPhase(store state.Store, id string, listed map[string]bool) (string, bool) {
	path := store.TeardownPath(id)
	if unlisted(listed, path) {
		return "", false
	}
	j, err := state.ReadJournal(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false
	case err != nil:
		return "teardown:unreadable", true
	}
	return "teardown:" + j.Phase, true
}

// unlisted reports a file the state dir's listing did not show; with no
// listing (status, one task), every file is read.
func unlisted(listed map[string]bool, path string) bool {
	return listed != nil && !listed[filepath.Base(path)]
}

// newHome reports whether home, as ResolveHome located it, is a directory
// whose default state dir was never made (no fm-spawn ran there). A state
// dir FM_STATE_OVERRIDE names is not new when missing: more likely a typo.
func newHome(home config.Home) bool {
	if home.Root == "" || home.State != filepath.Join(home.Root, "state") {
		return false
	}
	_, err := os.Lstat(home.State)
	return errors.Is(err, fs.ErrNotExist)
}

// recordIDs names every *.meta in the state dir, sorted, and every file
// the dir holds (listed).
func recordIDs(dir string) (ids []string, listed map[string]bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot list the state dir %s: %w", dir, err)
	}
	listed = make(map[string]bool, len(entries))
	for _, e := range entries {
		listed[e.Name()] = true
		if id, ok := strings.CutSuffix(e.Name(), ".meta"); ok && id != "" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, listed, nil
}

func (c *Controller) printList(dir string, rows []listRow) error {
	if c.print.JSON {
		c.print.Value(struct {
			Outcome string    `json:"outcome"`
			Count   int       `json:"count"`
			Tasks   []listRow `json:"tasks"`
		}{"list", len(rows), append([]listRow{}, rows...)})
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintf(c.print.Out, "no tasks in %s\n", dir)
		return nil
	}
	if c.print.OutTTY {
		return c.printTable(rows)
	}
	// The lines go out in one write, not one each: 500 tasks are 500
	// writes to a pipe, each waking its reader.
	var out bytes.Buffer
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(&out, "%s: error: %s\n", oneLine(r.ID), oneLine(r.Error))
			continue
		}
		server := ""
		if r.Server != "" {
			server = " server=" + r.Server
		}
		attention := ""
		if r.Attention != "" {
			attention = fmt.Sprintf(" attention=%s stalled_for=%s", r.Attention, formatSeconds(r.StalledFor))
		}
		fmt.Fprintf(&out, "%s: harness=%s kind=%s backend=%s endpoint=%s state=%s%s activity=%s%s journal=%s\n",
			r.ID, cli.TextValue(oneLine(r.Harness)), cli.TextValue(r.Kind), cli.TextValue(r.Backend), cli.TextValue(oneLine(r.Endpoint)), r.State, server, r.Activity, attention, cli.TextValue(r.Journal))
	}
	_, _ = c.print.Out.Write(out.Bytes())
	return nil
}

// oneLine keeps a value read from a record (which may hold anything but a
// newline) to one line of plain text on the caller's terminal.
func oneLine(s string) string {
	return lineBreaks.Replace(termtext.Strip(s))
}

// lineBreaks is made once, not on each of a list's rows.
var lineBreaks = strings.NewReplacer("\n", " ", "\t", " ")
