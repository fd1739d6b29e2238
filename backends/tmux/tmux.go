// Package tmux is the tmux adapter: a backends.Backend that drives tmux
// through its client, and reads what runs in a pane from the process table.
package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"fmctl/backends"
	"fmctl/backends/proc"
	"fmctl/harness"
	"fmctl/state"
)

// Options names the tmux binary and server.
type Options struct {
	Binary     string // default "tmux"
	Socket     string // -L name (FM_TMUX_SOCKET); tests use a private one
	SocketPath string // -S path (FM_TMUX_SOCKET_PATH)
	Procs      proc.Table
	// ServerPath is the PATH a server this adapter starts gives its panes
	// (the caller's): the shell the launch line is typed into looks the
	// harness up there, unless its login profile resets it.
	ServerPath string
}

// Adapter drives tmux. An endpoint is `session:window` by window name; every
// command after the first lookup addresses the pane by its id (%N), because
// tmux resolves a window *name* loosely: `=s:=fm-a.b` finds the window
// `fm-a` (the dot starts a pane index), and an absent window can fall back to
// the active one. Pane ids are exact and never reused within a server.
type Adapter struct {
	r    backends.Runner
	o    Options
	mu   sync.Mutex
	pane map[string]string // target -> pane id from the latest lookup
}

// New returns a tmux adapter.
func New(r backends.Runner, o Options) *Adapter {
	if o.Binary == "" {
		o.Binary = "tmux"
	}
	if o.Procs == nil {
		o.Procs = proc.NewTable(r)
	}
	return &Adapter{r: r, o: o, pane: map[string]string{}}
}

func (t *Adapter) Name() string { return "tmux" }

// server is the global options of every call: the server's socket, and -u.
// In a locale that is not UTF-8 (no LANG, LC_ALL=C: cron, systemd, a bare
// CI shell) tmux 3.3a prints every control character of a format as "_",
// so the tab between the fields of a lookup would vanish and a created
// pane's ids could not be read; -u makes tmux take the client as UTF-8.
func (t *Adapter) server() []string {
	switch {
	case t.o.SocketPath != "":
		return []string{"-u", "-S", t.o.SocketPath}
	case t.o.Socket != "":
		return []string{"-u", "-L", t.o.Socket}
	}
	return []string{"-u"}
}

// AttachCommand is the tmux client line that attaches to the endpoint's
// session on the adapter's server (its -L or -S, which a person's plain
// `tmux attach` would miss).
func (t *Adapter) AttachCommand(ep backends.Endpoint) (string, bool) {
	session, _, err := SplitTarget(ep.Target)
	if err != nil {
		return "", false
	}
	words := []string{harness.QuoteIfNeeded(t.o.Binary)}
	for _, w := range t.server()[1:] { // -u is for fmctl's own calls
		words = append(words, harness.QuoteIfNeeded(w))
	}
	return strings.Join(append(words, "attach", "-t", harness.QuoteIfNeeded(session)), " "), true
}

func (t *Adapter) cmd(args ...string) backends.Cmd {
	return backends.Cmd{Path: t.o.Binary, Args: append(t.server(), args...)}
}

// run makes one tmux call.
func (t *Adapter) run(ctx context.Context, args ...string) (backends.Output, error) {
	return t.r.Run(ctx, t.cmd(args...))
}

// SplitTarget splits `session:window`.
func SplitTarget(target string) (session, window string, err error) {
	s, w, ok := strings.Cut(target, ":")
	if !ok || s == "" || w == "" || strings.Contains(w, ":") {
		return "", "", fmt.Errorf("tmux endpoint '%s' is not session:window", target)
	}
	return s, w, nil
}

// Pastes: see backends.NeedsPaste; the rest goes as typed keys (send-keys -l).
func (t *Adapter) Pastes(text string) bool { return backends.NeedsPaste(text) }

func (t *Adapter) SendText(ctx context.Context, ep backends.Endpoint, text string) error {
	_, err := t.sendText(ctx, ep, text, false)
	return err
}

// CaptureThenType reads the screen and types the text in one tmux
// invocation, so a submit's baseline costs no extra process.
func (t *Adapter) CaptureThenType(ctx context.Context, ep backends.Endpoint, text string) (backends.Screen, error) {
	return t.sendText(ctx, ep, text, true)
}

func (t *Adapter) sendText(ctx context.Context, ep backends.Endpoint, text string, capture bool) (backends.Screen, error) {
	pane, err := t.paneID(ctx, ep)
	if err != nil {
		return backends.Screen{}, err
	}
	var args []string
	if capture {
		args = append(args, "display-message", "-p", "-t", pane, "#{cursor_y} #{cursor_x}", ";", "capture-pane", "-p", "-t", pane, ";")
	}
	var stdin []byte
	if t.Pastes(text) {
		buf := fmt.Sprintf("fmctl-%d", os.Getpid())
		args = append(args, "load-buffer", "-b", buf, "-", ";", "paste-buffer", "-p", "-d", "-b", buf, "-t", pane)
		stdin = []byte(text)
	} else {
		args = append(args, "send-keys", "-t", pane, "-l", "--", escapeTmuxArg(text))
	}
	c := t.cmd(args...)
	c.Stdin = stdin // load-buffer - reads the paste from the client's input
	out, err := t.r.Run(ctx, c)
	if err != nil {
		return backends.Screen{}, fmt.Errorf("tmux type into %s (%s): %w", ep.Target, pane, err)
	}
	if !capture {
		return backends.Screen{}, nil
	}
	return parseCapture(out.Stdout), nil
}

// escapeTmuxArg protects a trailing ';': tmux treats any argv word ending in
// ';' as a command separator (and strips it), and reads a final "\;" as a
// literal ';'.
func escapeTmuxArg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}

var tmuxKeyNames = map[harness.Key]string{
	harness.KeyEscape: "Escape", harness.KeyEnter: "Enter", harness.KeyCtrlC: "C-c", harness.KeyCtrlU: "C-u", harness.KeyEnd: "End",
}

func (t *Adapter) SendKey(ctx context.Context, ep backends.Endpoint, key harness.Key) error {
	name, pane, err := t.keyTarget(ctx, ep, key)
	if err != nil {
		return err
	}
	if _, err := t.run(ctx, "send-keys", "-t", pane, name); err != nil {
		return fmt.Errorf("tmux send-keys %s to %s (%s): %w", name, ep.Target, pane, err)
	}
	return nil
}

// SendKeyThenState sends the key and reads the pane back in the same tmux
// invocation, so an interrupt's key and its proof that the agent survived
// cost one process.
func (t *Adapter) SendKeyThenState(ctx context.Context, ep backends.Endpoint, key harness.Key) (backends.Observation, error) {
	name, pane, err := t.keyTarget(ctx, ep, key)
	if err != nil {
		return backends.Observation{}, err
	}
	out, err := t.run(ctx, "send-keys", "-t", pane, name, ";", "display-message", "-p", "-t", pane, paneFormat)
	if err != nil {
		return backends.Observation{}, fmt.Errorf("tmux send-keys %s to %s (%s): %w", name, ep.Target, pane, err)
	}
	return t.stateAfter(ctx, ep, pane, string(out.Stdout)), nil
}

// stateAfter classifies the pane line read right after a key. A pane that
// no longer reads as the endpoint's is looked up afresh, which tells
// drifted from missing.
func (t *Adapter) stateAfter(ctx context.Context, ep backends.Endpoint, pane, line string) backends.Observation {
	info, ok := parsePaneLine(strings.TrimRight(line, "\n"))
	if !ok || info.pane != pane || info.session+":"+info.window != ep.Target {
		return t.AgentState(ctx, ep)
	}
	return t.classify(ctx, info)
}

// keyTarget maps a key to its tmux name and resolves the endpoint's pane.
func (t *Adapter) keyTarget(ctx context.Context, ep backends.Endpoint, key harness.Key) (name, pane string, err error) {
	name, ok := tmuxKeyNames[key]
	if !ok {
		return "", "", fmt.Errorf("tmux adapter has no mapping for key %s", key)
	}
	pane, err = t.paneID(ctx, ep)
	return name, pane, err
}

func (t *Adapter) Capture(ctx context.Context, ep backends.Endpoint) (backends.Screen, error) {
	pane, err := t.paneID(ctx, ep)
	if err != nil {
		return backends.Screen{}, err
	}
	out, err := t.run(ctx, "display-message", "-p", "-t", pane, "#{cursor_y} #{cursor_x}", ";", "capture-pane", "-p", "-t", pane)
	if err != nil {
		return backends.Screen{}, fmt.Errorf("tmux capture-pane %s (%s): %w", ep.Target, pane, err)
	}
	return parseCapture(out.Stdout), nil
}

// parseCapture reads `display-message '#{cursor_y} #{cursor_x}' ; capture-pane -p` output.
func parseCapture(out []byte) backends.Screen {
	first, rest, _ := strings.Cut(string(out), "\n")
	return screenOf(first, rest)
}

// screenOf is a screen from its cursor line ("y x") and its rows.
func screenOf(cursor, rows string) backends.Screen {
	s := backends.Screen{Lines: strings.Split(strings.TrimRight(rows, "\n"), "\n")}
	pos := strings.Fields(cursor)
	if len(pos) > 0 {
		if y, err := strconv.Atoi(pos[0]); err == nil {
			s.CursorY, s.Cursor = y, true
		}
	}
	if len(pos) > 1 {
		if x, err := strconv.Atoi(pos[1]); err == nil && x > 0 {
			s.CursorX = x
		}
	}
	return s
}

// AgentStateAndCapture reads the recorded pane's line and its screen in
// one tmux invocation. A record without the pane's id, or a pane that does
// not read back as the endpoint's (gone, moved, an error), takes the
// ordinary lookup, which tells those apart, and reports no screen.
func (t *Adapter) AgentStateAndCapture(ctx context.Context, ep backends.Endpoint) (backends.Observation, backends.Screen, error) {
	obs, out, err := t.stateAnd(ctx, ep, func(id string) []string {
		return []string{"display-message", "-p", "-t", id, "#{cursor_y} #{cursor_x}", ";", "capture-pane", "-p", "-t", id}
	})
	if err != nil {
		return obs, backends.Screen{}, err
	}
	return obs, parseCapture(out), nil
}

// AgentStateAndHistory is AgentStateAndCapture for the pane's last lines,
// scrollback included (History's text): each look of `read --follow` is
// one tmux client, not two.
func (t *Adapter) AgentStateAndHistory(ctx context.Context, ep backends.Endpoint, lines int) (backends.Observation, []string, error) {
	obs, out, err := t.stateAnd(ctx, ep, func(id string) []string {
		return []string{"capture-pane", "-p", "-J", "-S", "-" + strconv.Itoa(lines), "-t", id}
	})
	if err != nil {
		return obs, nil, err
	}
	return obs, backends.LastLines(string(out), lines), nil
}

// stateAnd runs the pane's line and then the commands read names for the
// pane, in one invocation, and returns the observation and what the
// commands printed, only where the pane read back as the endpoint's.
func (t *Adapter) stateAnd(ctx context.Context, ep backends.Endpoint, read func(pane string) []string) (backends.Observation, []byte, error) {
	id := ep.Field(state.KeyTmuxPane)
	session, window, err := SplitTarget(ep.Target)
	if id == "" || err != nil {
		return t.AgentState(ctx, ep), nil, errNoScreen
	}
	out, err := t.run(ctx, append([]string{"display-message", "-p", "-t", id, paneFormat, ";"}, read(id)...)...)
	if err != nil {
		// A server that did not answer (a timeout, no server) would not
		// answer the lookup either: asking again would only double the
		// wait on a hung one.
		if _, timedOut := backends.MayHaveRun(err); timedOut || isNoServer(backends.StderrOf(err)) {
			return observeLookupErr(t.unlessServerGone(ctx, ep, serverErr("tmux display-message -t "+id, backends.StderrOf(err)))), nil, errNoScreen
		}
		return t.AgentState(ctx, ep), nil, errNoScreen
	}
	line, rest, _ := strings.Cut(string(out.Stdout), "\n")
	info, ok := parsePaneLine(line)
	if !ok || info.pane != id || info.session != session || info.window != window || notTheRecordedPane(ep, info) != "" {
		return t.AgentState(ctx, ep), nil, errNoScreen
	}
	t.remember(ep.Target, info.pane)
	return t.classify(ctx, info), []byte(rest), nil
}

// errNoScreen: the pane was not read back as the endpoint's in the one
// call, so its screen was not taken as the agent's.
var errNoScreen = errors.New("the screen was not read with the pane")

func (t *Adapter) AgentState(ctx context.Context, ep backends.Endpoint) backends.Observation {
	obs, _ := t.agentState(ctx, ep)
	return obs
}

// agentState is AgentState, with the pane the endpoint was found at ("" if
// none was).
func (t *Adapter) agentState(ctx context.Context, ep backends.Endpoint) (backends.Observation, string) {
	info, err := t.lookup(ctx, ep)
	if err != nil {
		return observeLookupErr(err), ""
	}
	return t.classify(ctx, info), info.pane
}

// classify decides what runs in one pane already found.
func (t *Adapter) classify(ctx context.Context, info paneInfo) backends.Observation {
	if info.dead {
		// tmux's own word: no process holds the pane's terminal, so none
		// takes its keys. A killed agent can still sit on the terminal's
		// foreground for a moment, and the process table would call it
		// alive.
		return backends.Observation{State: backends.StateDead, Detail: "the pane is dead (tmux keeps it for remain-on-exit)", CurrentPath: info.path}
	}
	if obs, _, ok := t.agentUnder(ctx, info.pid); ok {
		obs.CurrentPath = info.path
		return obs
	}
	var procs []proc.Process
	var procErr error
	if info.tty != "" {
		procs, procErr = t.paneProcs(ctx, info)
	}
	obs := proc.ClassifyPane(procs, procErr, info.command)
	obs.CurrentPath = info.path
	return obs
}

// paneProcs lists the processes on the pane's terminal: its shell's process
// tree where the table can walk one and the tree's foreground is more than a
// shell, since such a tree has every process that decides a state (the
// foreground, and a stopped agent, a job of the shell); otherwise, or when
// the walk fails, every process on the machine. A shell in the foreground
// is the agent-free verdict, and an agent still ending after its parent
// died belongs to init's tree, not the shell's: only the whole table
// proves it gone.
func (t *Adapter) paneProcs(ctx context.Context, info paneInfo) ([]proc.Process, error) {
	if tt, ok := t.o.Procs.(proc.TreeTable); ok && info.pid > 0 {
		procs, err := tt.OnTTYUnder(ctx, info.tty, info.pid)
		if err == nil && slices.ContainsFunc(procs, foregroundBeyondShell) {
			return procs, nil
		}
	}
	return t.o.Procs.OnTTY(ctx, info.tty)
}

func foregroundBeyondShell(p proc.Process) bool {
	return p.Foreground() && !p.Exited() && harness.ClassifyProcess(p.Comm) != harness.ProcessShell
}

// foregroundLeader is the fast path for the common case, an agent in the
// foreground: the pane shell's stat names the terminal's foreground group,
// whose leader is read directly, two files instead of a scan of every
// process. A shell without job control (sh -c) keeps its child in its own
// group, so then its children are read instead. It only ever answers
// "alive"; anything else takes the full scan.
func (t *Adapter) foregroundLeader(ctx context.Context, shellPID int) (proc.Process, bool) {
	if shellPID <= 0 {
		return proc.Process{}, false
	}
	// The shell's argv is never looked at: its stat alone where the table
	// can, one /proc file a pane instead of two.
	read := t.o.Procs.Process
	if st, ok := t.o.Procs.(proc.StatTable); ok {
		read = st.Stat
	}
	shell, err := read(ctx, shellPID)
	if err != nil || shell.TPGID <= 0 || shell.Exited() {
		return proc.Process{}, false
	}
	candidates := []int{shell.TPGID}
	if shell.TPGID == shell.PGID {
		if candidates, err = t.o.Procs.Children(ctx, shellPID); err != nil {
			return proc.Process{}, false
		}
	}
	for _, pid := range candidates {
		p, err := t.o.Procs.Process(ctx, pid)
		if err == nil && !p.Exited() && p.PGID == shell.TPGID && harness.ClassifyArgv(p.Comm, p.Argv) == harness.ProcessAgent {
			return p, true
		}
	}
	return proc.Process{}, false
}

func (t *Adapter) CurrentPath(ctx context.Context, ep backends.Endpoint) (string, error) {
	info, err := t.lookup(ctx, ep)
	if err != nil {
		return "", err
	}
	return info.path, nil
}

func (t *Adapter) Kill(ctx context.Context, ep backends.Endpoint) error {
	pane, err := t.paneID(ctx, ep)
	if err != nil {
		return err
	}
	if _, err := t.run(ctx, "kill-window", "-t", pane); err != nil {
		return fmt.Errorf("tmux kill-window %s (%s): %w", ep.Target, pane, err)
	}
	return nil
}

func (t *Adapter) ValidateRecord(ep backends.Endpoint) error {
	session, window, err := SplitTarget(ep.Target)
	if err != nil {
		return err
	}
	if !backends.ValidAtom(session) {
		return fmt.Errorf("tmux session '%s' in window=%s has characters outside [A-Za-z0-9._@%%+-]", session, ep.Target)
	}
	if ep.TaskID != "" && window != "fm-"+ep.TaskID {
		return fmt.Errorf("recorded window %s is not task %s's window fm-%s", ep.Target, ep.TaskID, ep.TaskID)
	}
	return validateTmuxIDs(ep)
}
