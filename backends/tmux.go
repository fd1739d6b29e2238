package backends

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"fmctl/harness"
)

// TmuxOptions names the tmux binary and server.
type TmuxOptions struct {
	Binary     string // default "tmux"
	Socket     string // -L name (FM_TMUX_SOCKET); tests use a private one
	SocketPath string // -S path (FM_TMUX_SOCKET_PATH)
	Procs      ProcTable
}

// Tmux drives tmux. An endpoint is `session:window` by window name; every
// command after the first lookup addresses the pane by its id (%N), because
// tmux resolves a window *name* loosely: `=s:=fm-a.b` finds the window
// `fm-a` (the dot starts a pane index), and an absent window can fall back to
// the active one. Pane ids are exact and never reused within a server.
type Tmux struct {
	r    Runner
	o    TmuxOptions
	mu   sync.Mutex
	pane map[string]string // target -> pane id from the latest lookup
}

// NewTmux returns a tmux adapter.
func NewTmux(r Runner, o TmuxOptions) *Tmux {
	if o.Binary == "" {
		o.Binary = "tmux"
	}
	if o.Procs == nil {
		o.Procs = NewProcTable(r)
	}
	return &Tmux{r: r, o: o, pane: map[string]string{}}
}

func (t *Tmux) Name() string { return "tmux" }

func (t *Tmux) cmd(args ...string) Cmd {
	var full []string
	switch {
	case t.o.SocketPath != "":
		full = append(full, "-S", t.o.SocketPath)
	case t.o.Socket != "":
		full = append(full, "-L", t.o.Socket)
	}
	return Cmd{Path: t.o.Binary, Args: append(full, args...)}
}

func (t *Tmux) run(ctx context.Context, args ...string) (Output, error) {
	return t.r.Run(ctx, t.cmd(args...))
}

// SplitTmuxTarget splits `session:window`.
func SplitTmuxTarget(target string) (session, window string, err error) {
	s, w, ok := strings.Cut(target, ":")
	if !ok || s == "" || w == "" || strings.Contains(w, ":") {
		return "", "", fmt.Errorf("tmux endpoint '%s' is not session:window", target)
	}
	return s, w, nil
}

// paneInfo is one window's active pane, as list-windows reports it.
type paneInfo struct {
	window, pane, tty, command, path string
	pid                              int // the pane's first process (its shell)
}

const listFormat = "#{window_name}\t#{pane_id}\t#{pane_pid}\t#{pane_tty}\t#{pane_current_command}\t#{pane_current_path}"

// lookupErr says why a window could not be found.
type lookupErr struct {
	state AgentState
	msg   string
}

func (e *lookupErr) Error() string { return e.msg }

// lookup finds the exact window name in the session: one tmux call that
// confirms existence and returns the pane id, tty, command and path.
func (t *Tmux) lookup(ctx context.Context, target string) (paneInfo, error) {
	session, window, err := SplitTmuxTarget(target)
	if err != nil {
		return paneInfo{}, &lookupErr{StateUnreadable, err.Error()}
	}
	out, err := t.run(ctx, "list-windows", "-t", "="+session, "-F", listFormat)
	if err != nil {
		msg := StderrOf(err)
		if isTmuxAbsent(msg) {
			return paneInfo{}, &lookupErr{StateMissing, fmt.Sprintf("tmux session %s is gone (%s)", session, msg)}
		}
		return paneInfo{}, &lookupErr{StateUnreadable, fmt.Sprintf("tmux list-windows -t %s: %s", session, msg)}
	}
	var found []paneInfo
	for _, line := range strings.Split(string(out.Stdout), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 6 || f[0] != window {
			continue
		}
		pid, _ := strconv.Atoi(f[2])
		found = append(found, paneInfo{window: f[0], pane: f[1], pid: pid, tty: f[3], command: f[4], path: strings.Join(f[5:], "\t")})
	}
	switch len(found) {
	case 0:
		return paneInfo{}, &lookupErr{StateMissing, fmt.Sprintf("no window named %s in tmux session %s", window, session)}
	case 1:
		t.mu.Lock()
		t.pane[target] = found[0].pane
		t.mu.Unlock()
		return found[0], nil
	default:
		return paneInfo{}, &lookupErr{StateUnreadable, fmt.Sprintf("%d windows are named %s in tmux session %s; refusing to pick one", len(found), window, session)}
	}
}

func isTmuxAbsent(msg string) bool {
	return strings.Contains(msg, "can't find session") ||
		strings.Contains(msg, "no server running") ||
		(strings.Contains(msg, "error connecting to") && (strings.Contains(msg, "No such file or directory") || strings.Contains(msg, "Connection refused")))
}

// paneID returns the pane id of target, looking it up when this process has
// not seen it yet.
func (t *Tmux) paneID(ctx context.Context, target string) (string, error) {
	t.mu.Lock()
	id, ok := t.pane[target]
	t.mu.Unlock()
	if ok {
		return id, nil
	}
	info, err := t.lookup(ctx, target)
	if err != nil {
		return "", err
	}
	return info.pane, nil
}

// pasteThreshold: longer text goes as a bracketed paste. Peers report long
// prompts typed through send-keys arriving truncated, and a paste reaches the
// agent as one message rather than one keystroke burst per line.
const pasteThreshold = 512

func (t *Tmux) SendText(ctx context.Context, ep Endpoint, text string) error {
	_, err := t.sendText(ctx, ep, text, false)
	return err
}

// CaptureThenType reads the screen and types the text in one tmux
// invocation, so a submit's baseline costs no extra process.
func (t *Tmux) CaptureThenType(ctx context.Context, ep Endpoint, text string) (Screen, error) {
	return t.sendText(ctx, ep, text, true)
}

func (t *Tmux) sendText(ctx context.Context, ep Endpoint, text string, capture bool) (Screen, error) {
	pane, err := t.paneID(ctx, ep.Target)
	if err != nil {
		return Screen{}, err
	}
	var args []string
	if capture {
		args = append(args, "display-message", "-p", "-t", pane, "#{cursor_y} #{cursor_x}", ";", "capture-pane", "-p", "-t", pane, ";")
	}
	var stdin []byte
	if strings.Contains(text, "\n") || len(text) > pasteThreshold {
		buf := fmt.Sprintf("fmctl-%d", os.Getpid())
		args = append(args, "load-buffer", "-b", buf, "-", ";", "paste-buffer", "-p", "-d", "-b", buf, "-t", pane)
		stdin = []byte(text)
	} else {
		args = append(args, "send-keys", "-t", pane, "-l", "--", escapeTmuxArg(text))
	}
	c := t.cmd(args...)
	c.Stdin = stdin
	out, err := t.r.Run(ctx, c)
	if err != nil {
		return Screen{}, fmt.Errorf("tmux type into %s (%s): %w", ep.Target, pane, err)
	}
	if !capture {
		return Screen{}, nil
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
	harness.KeyEscape: "Escape", harness.KeyEnter: "Enter", harness.KeyCtrlC: "C-c", harness.KeyCtrlU: "C-u",
}

func (t *Tmux) SendKey(ctx context.Context, ep Endpoint, key harness.Key) error {
	name, ok := tmuxKeyNames[key]
	if !ok {
		return fmt.Errorf("tmux adapter has no mapping for key %s", key)
	}
	pane, err := t.paneID(ctx, ep.Target)
	if err != nil {
		return err
	}
	if _, err := t.run(ctx, "send-keys", "-t", pane, name); err != nil {
		return fmt.Errorf("tmux send-keys %s to %s (%s): %w", name, ep.Target, pane, err)
	}
	return nil
}

func (t *Tmux) Capture(ctx context.Context, ep Endpoint) (Screen, error) {
	pane, err := t.paneID(ctx, ep.Target)
	if err != nil {
		return Screen{}, err
	}
	out, err := t.run(ctx, "display-message", "-p", "-t", pane, "#{cursor_y} #{cursor_x}", ";", "capture-pane", "-p", "-t", pane)
	if err != nil {
		return Screen{}, fmt.Errorf("tmux capture-pane %s (%s): %w", ep.Target, pane, err)
	}
	return parseCapture(out.Stdout), nil
}

// parseCapture reads `display-message '#{cursor_y} #{cursor_x}' ; capture-pane -p` output.
func parseCapture(out []byte) Screen {
	first, rest, _ := strings.Cut(string(out), "\n")
	s := Screen{Lines: strings.Split(strings.TrimRight(rest, "\n"), "\n")}
	pos := strings.Fields(first)
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

func (t *Tmux) AgentState(ctx context.Context, ep Endpoint) Observation {
	info, err := t.lookup(ctx, ep.Target)
	if err != nil {
		var le *lookupErr
		if errors.As(err, &le) {
			return Observation{State: le.state, Detail: le.msg}
		}
		return Observation{State: StateUnreadable, Detail: err.Error()}
	}
	if leader, ok := t.foregroundLeader(ctx, info.pid); ok {
		name := harness.AgentName(leader.Comm, leader.Argv)
		return Observation{State: StateAlive, Names: []string{name}, Detail: "foreground " + name, CurrentPath: info.path}
	}
	var procs []Process
	var procErr error
	if info.tty != "" {
		procs, procErr = t.o.Procs.OnTTY(ctx, info.tty)
	}
	obs := classifyPane(procs, procErr, info.command)
	obs.CurrentPath = info.path
	return obs
}

// foregroundLeader is the fast path for the common case, an agent in the
// foreground: the pane shell's stat names the terminal's foreground group,
// whose leader is read directly, two files instead of a scan of every
// process. A shell without job control (sh -c) keeps its child in its own
// group, so then its children are read instead. It only ever answers
// "alive"; anything else takes the full scan.
func (t *Tmux) foregroundLeader(ctx context.Context, shellPID int) (Process, bool) {
	if shellPID <= 0 {
		return Process{}, false
	}
	shell, err := t.o.Procs.Process(ctx, shellPID)
	if err != nil || shell.TPGID <= 0 {
		return Process{}, false
	}
	candidates := []int{shell.TPGID}
	if shell.TPGID == shell.PGID {
		if candidates, err = t.o.Procs.Children(ctx, shellPID); err != nil {
			return Process{}, false
		}
	}
	for _, pid := range candidates {
		p, err := t.o.Procs.Process(ctx, pid)
		if err == nil && p.PGID == shell.TPGID && harness.ClassifyArgv(p.Comm, p.Argv) == harness.ProcessAgent {
			return p, true
		}
	}
	return Process{}, false
}

func (t *Tmux) CurrentPath(ctx context.Context, ep Endpoint) (string, error) {
	info, err := t.lookup(ctx, ep.Target)
	if err != nil {
		return "", err
	}
	return info.path, nil
}

func (t *Tmux) Create(ctx context.Context, spec CreateSpec) ([]Field, error) {
	session := spec.Container
	if session == "" {
		session = "firstmate"
	}
	target := session + ":" + spec.Label
	if _, err := t.lookup(ctx, target); err == nil {
		return nil, fmt.Errorf("window %s already exists; refusing to create a second endpoint for task %s", target, spec.TaskID)
	} else if le := (*lookupErr)(nil); errors.As(err, &le) && le.state != StateMissing {
		return nil, err
	}
	out, err := t.run(ctx, "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "="+session+":", "-n", spec.Label, "-c", spec.Dir)
	if err != nil {
		if !isTmuxAbsent(StderrOf(err)) {
			return nil, fmt.Errorf("tmux new-window %s: %w", target, err)
		}
		out, err = t.run(ctx, "new-session", "-d", "-P", "-F", "#{pane_id}", "-s", session, "-n", spec.Label, "-c", spec.Dir)
		if err != nil {
			return nil, fmt.Errorf("tmux new-session %s: %w", target, err)
		}
	}
	pane := strings.TrimSpace(string(out.Stdout))
	if !strings.HasPrefix(pane, "%") {
		return nil, fmt.Errorf("tmux created %s but printed no pane id (%q)", target, pane)
	}
	// A renamed window would no longer match its record, so the agent must not
	// be able to retitle it.
	if _, err := t.run(ctx, "set-option", "-w", "-t", pane, "allow-rename", "off", ";",
		"set-option", "-w", "-t", pane, "automatic-rename", "off"); err != nil {
		_, _ = t.run(ctx, "kill-window", "-t", pane)
		return nil, fmt.Errorf("tmux pin window name %s: %w", target, err)
	}
	t.mu.Lock()
	t.pane[target] = pane
	t.mu.Unlock()
	return []Field{{"window", target}}, nil
}

func (t *Tmux) Kill(ctx context.Context, ep Endpoint) error {
	pane, err := t.paneID(ctx, ep.Target)
	if err != nil {
		return err
	}
	if _, err := t.run(ctx, "kill-window", "-t", pane); err != nil {
		return fmt.Errorf("tmux kill-window %s (%s): %w", ep.Target, pane, err)
	}
	return nil
}

func (t *Tmux) ValidateRecord(ep Endpoint) error {
	session, window, err := SplitTmuxTarget(ep.Target)
	if err != nil {
		return err
	}
	if !validAtom(session) {
		return fmt.Errorf("tmux session '%s' in window=%s has characters outside [A-Za-z0-9._@%%+-]", session, ep.Target)
	}
	if ep.TaskID != "" && window != "fm-"+ep.TaskID {
		return fmt.Errorf("recorded window %s is not task %s's window fm-%s", ep.Target, ep.TaskID, ep.TaskID)
	}
	return nil
}

// validAtom is the character set an endpoint part may use.
func validAtom(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("._@%+-", c) >= 0:
		default:
			return false
		}
	}
	return true
}
