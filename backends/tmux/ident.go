package tmux

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"fmctl/backends"
	"fmctl/state"
)

// tmuxPaneID and tmuxWindowID report whether s is a tmux pane id (%N) or
// window id (@N), checked by hand: a regexp compiled at start-up would cost
// every invocation.
func tmuxPaneID(s string) bool { return strings.HasPrefix(s, "%") && backends.Digits(s[1:]) }

func tmuxWindowID(s string) bool { return strings.HasPrefix(s, "@") && backends.Digits(s[1:]) }

// paneInfo is one pane as tmux reports it.
type paneInfo struct {
	window, windowID, session, pane, tty, command, path string
	pid                                                 int  // the pane's first process (its shell)
	dead                                                bool // tmux closed the pane's terminal (remain-on-exit keeps it)
	// server is the tmux server that holds the pane, as "pid:start_time":
	// a new server numbers its panes and windows from %0 and @0 again, so
	// an id proves the pane only together with the server that issued it.
	server string
}

// where names a pane for a person: `%N in session:window`.
func (p paneInfo) where() string { return p.pane + " in " + p.session + ":" + p.window }

// serverFormat names the server: its pid and the second it started. After
// a reboot the pid alone may come back; the pair does not.
const serverFormat = "#{pid}:#{start_time}"

// paneFormat is the one format every lookup reads; the path comes last
// because it alone may hold a tab.
const paneFormat = "#{window_name}\t#{pane_id}\t#{pane_pid}\t#{pane_tty}\t#{pane_current_command}\t#{window_id}\t#{session_name}\t#{pane_dead}\t" + serverFormat + "\t#{pane_current_path}"

func parsePaneLine(line string) (paneInfo, bool) {
	f := strings.Split(line, "\t")
	if len(f) < 10 {
		return paneInfo{}, false
	}
	pid, _ := strconv.Atoi(f[2])
	return paneInfo{window: f[0], pane: f[1], pid: pid, tty: f[3], command: f[4], windowID: f[5], session: f[6], dead: f[7] == "1", server: f[8], path: strings.Join(f[9:], "\t")}, true
}

// validServer reports whether s is a server identity as serverFormat
// prints it: two runs of digits around a colon.
func validServer(s string) bool {
	pid, start, ok := strings.Cut(s, ":")
	return ok && backends.Digits(pid) && backends.Digits(start)
}

// notTheRecordedPane says why a pane tmux found under the recorded id is not
// the pane the record names, or "" when nothing tells them apart: a server
// other than the recorded one issued the id (tmux restarted, or the machine
// rebooted), or the pane's window carries another task's label (a record
// from before tmux_server, whose id a new server gave that task). Its first
// process proves nothing: respawn-pane replaces it in the same pane.
func notTheRecordedPane(ep backends.Endpoint, info paneInfo) string {
	if notSameServer(ep, info) {
		return "tmux restarted (" + serverChange(ep.Field(state.KeyTmuxServer), info.server) + ")"
	}
	if other, ok := state.LabelTask(info.window); ok && ep.TaskID != "" && other != ep.TaskID {
		return "its id now names task " + other + "'s window " + info.where()
	}
	return ""
}

// unlessServerGone turns a lookup that found no server into missing when
// the recorded server is provably gone (recordedServerGone); any other
// error is returned as it is.
func (t *Adapter) unlessServerGone(ctx context.Context, ep backends.Endpoint, err error) error {
	var le *lookupErr
	if !errors.As(err, &le) || !le.noServer {
		return err
	}
	if why := t.recordedServerGone(ctx, ep); why != "" {
		return &lookupErr{state: backends.StateMissing, msg: "no tmux server runs, and " + why, serverGone: true}
	}
	return err
}

// recordedServerGone says why the server the record names can no longer
// hold the task's pane, or "" when it may: when no server answers, a
// wrong FM_TMUX_SOCKET is as likely as a restart, so the pane counts as
// gone only once the recorded server's process is gone, or is a program
// other than tmux (its pid reused, as after a reboot). A live tmux under
// that pid stays unreadable, even if it is another server that took the pid.
func (t *Adapter) recordedServerGone(ctx context.Context, ep backends.Endpoint) string {
	want := ep.Field(state.KeyTmuxServer)
	if !validServer(want) {
		return ""
	}
	pidText, _, _ := strings.Cut(want, ":")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return ""
	}
	p, err := t.o.Procs.Process(ctx, pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("its server (pid %s) is gone", pidText)
	case err != nil:
		return ""
	case !strings.HasPrefix(p.Comm, "tmux"):
		return fmt.Sprintf("its server (pid %s) is gone; that pid is now %s", pidText, p.Comm)
	}
	return ""
}

// notSameServer reports whether the record names a server and p is on
// another one.
func notSameServer(ep backends.Endpoint, p paneInfo) bool {
	want := ep.Field(state.KeyTmuxServer)
	return want != "" && p.server != want
}

// serverChange names the recorded server against the one now running by
// pid, or by start time when the pid came back (a reboot).
func serverChange(recorded, now string) string {
	rp, rs, _ := strings.Cut(recorded, ":")
	np, ns, _ := strings.Cut(now, ":")
	if rp != np {
		return "server pid " + rp + ", now " + np
	}
	return "server started at " + rs + ", now " + ns
}

// lookupErr says why an endpoint could not be resolved.
type lookupErr struct {
	state    backends.AgentState
	msg      string
	noServer bool // the server is not running (or the socket is wrong)
	// serverGone: missing because the recorded server is gone or another
	// runs in its place (Observation.ServerGone).
	serverGone bool
}

func (e *lookupErr) Error() string { return e.msg }

func observeLookupErr(err error) backends.Observation {
	var le *lookupErr
	if errors.As(err, &le) {
		return backends.Observation{State: le.state, Detail: le.msg, NoServer: le.noServer, ServerGone: le.serverGone}
	}
	return backends.Observation{State: backends.StateUnreadable, Detail: err.Error()}
}

// serverErr classifies a failed tmux call. Only a server that answered can
// say something is missing: no server (or a wrong socket) is unreadable,
// because the agent may well be running on the server fmctl failed to reach.
func serverErr(what, msg string) *lookupErr {
	if isNoServer(msg) {
		return &lookupErr{state: backends.StateUnreadable, noServer: true, msg: fmt.Sprintf("%s: tmux server unreachable (%s); check FM_TMUX_SOCKET", what, msg)}
	}
	return &lookupErr{state: backends.StateUnreadable, msg: fmt.Sprintf("%s: %s", what, msg)}
}

func isNoServer(msg string) bool {
	return strings.Contains(msg, "no server running") || strings.Contains(msg, "error connecting to")
}

// lookup resolves an endpoint in one tmux call: by the recorded pane id
// when the record has one (checking the pane still sits in the recorded
// session:window), else by the window label.
func (t *Adapter) lookup(ctx context.Context, ep backends.Endpoint) (paneInfo, error) {
	session, window, err := SplitTarget(ep.Target)
	if err != nil {
		return paneInfo{}, &lookupErr{state: backends.StateUnreadable, msg: err.Error()}
	}
	var info paneInfo
	if id := ep.Field(state.KeyTmuxPane); id != "" {
		info, err = t.lookupByID(ctx, ep, session, window, id)
	} else {
		info, err = t.lookupByLabel(ctx, session, window)
	}
	if err != nil {
		return paneInfo{}, t.unlessServerGone(ctx, ep, err)
	}
	t.remember(ep.Target, info.pane)
	return info, nil
}

// lookupByID reads the recorded pane. tmux 3.3a's display-message does not
// fail for an absent pane (it prints the format against no pane), so the
// pane id it echoes is what proves the pane exists.
func (t *Adapter) lookupByID(ctx context.Context, ep backends.Endpoint, session, window, id string) (paneInfo, error) {
	target := ep.Target
	out, err := t.run(ctx, "display-message", "-p", "-t", id, paneFormat)
	if err != nil {
		return paneInfo{}, serverErr("tmux display-message -t "+id, backends.StderrOf(err))
	}
	info, ok := parsePaneLine(strings.TrimRight(string(out.Stdout), "\n"))
	gone := "is gone"
	restarted := false
	switch {
	case ok && info.pane == id:
		if why := notTheRecordedPane(ep, info); why != "" {
			ok, gone, restarted = false, "is gone: "+why, notSameServer(ep, info)
		}
	case ok && validServer(info.server) && notSameServer(ep, info):
		// tmux 3.3a prints the format for an absent pane, and the server's
		// own fields in it still say which server answered.
		gone, restarted = "is gone: tmux restarted ("+serverChange(ep.Field(state.KeyTmuxServer), info.server)+")", true
	}
	if !ok || info.pane != id {
		// The recorded pane is gone; the label alone may live on elsewhere.
		other, err := t.lookupByLabel(ctx, session, window)
		var le *lookupErr
		switch {
		case err == nil && !notSameServer(ep, other):
			return paneInfo{}, &lookupErr{state: backends.StateDrifted, msg: fmt.Sprintf("recorded pane %s %s, but %s carries the label %s", id, gone, other.where(), window)}
		case err == nil:
			return paneInfo{}, &lookupErr{state: backends.StateMissing, msg: fmt.Sprintf("recorded pane %s %s; %s is a new server's window", id, gone, other.where()), serverGone: true}
		case errors.As(err, &le) && le.state == backends.StateMissing && gone != "is gone":
			return paneInfo{}, &lookupErr{state: backends.StateMissing, msg: fmt.Sprintf("recorded pane %s %s", id, gone), serverGone: restarted}
		case errors.As(err, &le) && le.state == backends.StateMissing:
			return paneInfo{}, &lookupErr{state: backends.StateMissing, msg: fmt.Sprintf("recorded pane %s is gone and no window is named %s in tmux session %s", id, window, session)}
		}
		return paneInfo{}, err
	}
	if info.session != session || info.window != window {
		return paneInfo{}, &lookupErr{state: backends.StateDrifted, msg: fmt.Sprintf("recorded pane %s is now %s, not %s", id, info.where(), target)}
	}
	return info, nil
}

// lookupByLabel finds the exact window name in the session (records
// written before the id keys existed).
func (t *Adapter) lookupByLabel(ctx context.Context, session, window string) (paneInfo, error) {
	out, err := t.run(ctx, "list-windows", "-t", "="+session, "-F", paneFormat)
	if err != nil {
		msg := backends.StderrOf(err)
		if strings.Contains(msg, "can't find session") {
			return paneInfo{}, &lookupErr{state: backends.StateMissing, msg: fmt.Sprintf("tmux session %s is gone (%s)", session, msg)}
		}
		return paneInfo{}, serverErr("tmux list-windows -t "+session, msg)
	}
	var found []paneInfo
	for _, line := range strings.Split(string(out.Stdout), "\n") {
		if p, ok := parsePaneLine(line); ok && p.window == window {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return paneInfo{}, &lookupErr{state: backends.StateMissing, msg: fmt.Sprintf("no window named %s in tmux session %s", window, session)}
	case 1:
		return found[0], nil
	}
	return paneInfo{}, &lookupErr{state: backends.StateUnreadable, msg: fmt.Sprintf("%d windows are named %s in tmux session %s; refusing to pick one", len(found), window, session)}
}

// remember keeps pane as where target was found, for paneID.
func (t *Adapter) remember(target, pane string) {
	t.mu.Lock()
	t.pane[target] = pane
	t.mu.Unlock()
}

// paneID returns the endpoint's pane id, resolving (and checking) it when
// this process has not yet.
func (t *Adapter) paneID(ctx context.Context, ep backends.Endpoint) (string, error) {
	t.mu.Lock()
	id, ok := t.pane[ep.Target]
	t.mu.Unlock()
	if ok {
		return id, nil
	}
	info, err := t.lookup(ctx, ep)
	if err != nil {
		return "", err
	}
	return info.pane, nil
}

func validateTmuxIDs(ep backends.Endpoint) error {
	if v, ok := ep.Fields[state.KeyTmuxPane]; ok && !tmuxPaneID(v) {
		return fmt.Errorf("%s=%s is not a tmux pane id (%%N)", state.KeyTmuxPane, v)
	}
	if v, ok := ep.Fields[state.KeyTmuxWindow]; ok && !tmuxWindowID(v) {
		return fmt.Errorf("%s=%s is not a tmux window id (@N)", state.KeyTmuxWindow, v)
	}
	if v, ok := ep.Fields[state.KeyTmuxPanePID]; ok && !backends.ValidPID(v) {
		return fmt.Errorf("%s=%s is not a process id", state.KeyTmuxPanePID, v)
	}
	if v, ok := ep.Fields[state.KeyTmuxServer]; ok && !validServer(v) {
		return fmt.Errorf("%s=%s is not a tmux server identity (pid:start_time)", state.KeyTmuxServer, v)
	}
	return nil
}

// DefaultSession holds task windows when neither FM_TMUX_SESSION nor
// config/fm.toml names a session.
const DefaultSession = "firstmate"

func (t *Adapter) Create(ctx context.Context, spec backends.CreateSpec) ([]backends.Field, error) {
	session := spec.Container
	if session == "" {
		session = DefaultSession
	}
	target := session + ":" + spec.Label
	var le *lookupErr
	if _, err := t.lookupByLabel(ctx, session, spec.Label); err == nil {
		return nil, fmt.Errorf("window %s already exists; refusing to create a second endpoint for task %s", target, spec.TaskID)
	} else if !errors.As(err, &le) || (le.state != backends.StateMissing && !le.noServer) {
		return nil, err
	}
	info, err := t.newWindow(ctx, session, spec)
	if err != nil {
		return nil, err
	}
	// A renamed window would no longer match its label, so the agent must
	// not be able to retitle it.
	if _, err := t.run(ctx, "set-option", "-w", "-t", info.pane, "allow-rename", "off", ";",
		"set-option", "-w", "-t", info.pane, "automatic-rename", "off"); err != nil {
		_, _ = t.run(ctx, "kill-window", "-t", info.pane)
		return nil, fmt.Errorf("tmux pin window name %s: %w", target, err)
	}
	t.remember(target, info.pane)
	return info.fields(target), nil
}

// fields are the record fields naming a pane: its ids, and its pid when
// tmux reported one.
func (p paneInfo) fields(target string) []backends.Field {
	f := []backends.Field{{Key: "window", Value: target}, {Key: state.KeyTmuxPane, Value: p.pane}, {Key: state.KeyTmuxWindow, Value: p.windowID}}
	if p.pid > 0 {
		f = append(f, backends.Field{Key: state.KeyTmuxPanePID, Value: strconv.Itoa(p.pid)})
	}
	if validServer(p.server) {
		f = append(f, backends.Field{Key: state.KeyTmuxServer, Value: p.server})
	}
	return f
}

const createdFormat = "#{pane_id}\t#{window_id}\t#{pane_pid}\t" + serverFormat

// newWindow adds the window to the session, creating the session when it
// does not exist. Two spawns may both find the session absent: the loser of
// that race gets "duplicate session" and adds its window to the winner's.
func (t *Adapter) newWindow(ctx context.Context, session string, spec backends.CreateSpec) (paneInfo, error) {
	target := session + ":" + spec.Label
	out, err := t.run(ctx, "new-window", "-d", "-P", "-F", createdFormat, "-t", "="+session+":", "-n", spec.Label, "-c", spec.Dir)
	if err != nil {
		msg := backends.StderrOf(err)
		if !strings.Contains(msg, "can't find session") && !isNoServer(msg) {
			return paneInfo{}, fmt.Errorf("tmux new-window %s: %w", target, err)
		}
		out, err = t.newSession(ctx, session, spec)
		if err != nil && strings.Contains(backends.StderrOf(err), "duplicate session") {
			out, err = t.run(ctx, "new-window", "-d", "-P", "-F", createdFormat, "-t", "="+session+":", "-n", spec.Label, "-c", spec.Dir)
		}
		if err != nil {
			return paneInfo{}, fmt.Errorf("tmux new-session %s: %w", target, err)
		}
	}
	pane, rest, _ := strings.Cut(strings.TrimSpace(string(out.Stdout)), "\t")
	window, rest, _ := strings.Cut(rest, "\t")
	pid, server, _ := strings.Cut(rest, "\t")
	if !tmuxPaneID(pane) || !tmuxWindowID(window) {
		return paneInfo{}, fmt.Errorf("tmux created %s but printed no pane and window id (%q)", target, out.Stdout)
	}
	info := paneInfo{pane: pane, windowID: window, session: session, window: spec.Label, server: server}
	if backends.ValidPID(pid) {
		info.pid, _ = strconv.Atoi(pid)
	}
	return info, nil
}

// newSession makes the session with the endpoint as its first window. The
// session's environment gets the caller's PATH (new-session -e, tmux 3.2
// and later; an older tmux is asked again without it): the server it may
// start would otherwise hand its panes whatever PATH its own start had.
func (t *Adapter) newSession(ctx context.Context, session string, spec backends.CreateSpec) (backends.Output, error) {
	args := []string{"new-session", "-d", "-P", "-F", createdFormat, "-s", session, "-n", spec.Label, "-c", spec.Dir}
	if t.o.ServerPath == "" {
		return t.run(ctx, args...)
	}
	out, err := t.run(ctx, append(args[:1:1], append([]string{"-e", "PATH=" + t.o.ServerPath}, args[1:]...)...)...)
	if err != nil && strings.Contains(backends.StderrOf(err), "unknown flag -e") {
		return t.run(ctx, args...)
	}
	return out, err
}

// PanesIn lists the panes on the server whose current directory is dir.
// It is the one tmux call that lists every pane, made only by launches and
// rebind, never by a lookup.
func (t *Adapter) PanesIn(ctx context.Context, dir string) ([]backends.Pane, error) {
	out, err := t.run(ctx, "list-panes", "-a", "-F", paneFormat)
	if err != nil {
		le := serverErr("tmux list-panes -a", backends.StderrOf(err))
		if le.noServer {
			return nil, nil
		}
		return nil, le
	}
	want := backends.SameDirKey(dir)
	var panes []backends.Pane
	for _, line := range strings.Split(string(out.Stdout), "\n") {
		info, ok := parsePaneLine(line)
		if !ok || backends.SameDirKey(info.path) != want {
			continue
		}
		panes = append(panes, backends.Pane{ID: info.pane, Where: info.session + ":" + info.window, Label: info.window, Obs: t.classify(ctx, info)})
	}
	return panes, nil
}

// Claim re-labels p's window as label when it was renamed (refusing when
// another window in its session already has that name) and returns the
// fields naming it.
func (t *Adapter) Claim(ctx context.Context, p backends.Pane, label string) ([]backends.Field, error) {
	out, err := t.run(ctx, "display-message", "-p", "-t", p.ID, paneFormat)
	if err != nil {
		return nil, serverErr("tmux display-message -t "+p.ID, backends.StderrOf(err))
	}
	info, ok := parsePaneLine(strings.TrimRight(string(out.Stdout), "\n"))
	if !ok || info.pane != p.ID {
		return nil, fmt.Errorf("pane %s is gone", p.ID)
	}
	if info.window != label {
		var le *lookupErr
		if other, err := t.lookupByLabel(ctx, info.session, label); err == nil {
			return nil, fmt.Errorf("session %s already has a window named %s (%s)", info.session, label, other.where())
		} else if !errors.As(err, &le) || le.state != backends.StateMissing {
			return nil, err
		}
		if _, err := t.run(ctx, "rename-window", "-t", info.windowID, label); err != nil {
			return nil, fmt.Errorf("tmux rename-window %s %s: %w", info.windowID, label, err)
		}
	}
	return info.fields(info.session + ":" + label), nil
}
