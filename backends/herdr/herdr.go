// Package herdr is the herdr adapter: a backends.Backend that drives herdr
// (ogulcancelik/herdr) through its CLI.
package herdr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"fmctl/backends"
	"fmctl/backends/proc"
	"fmctl/harness"
	"fmctl/state"
)

// Options names the herdr binary and the session endpoints are created in.
type Options struct {
	Binary         string // default "herdr"
	DefaultSession string // the caller passes $HERDR_SESSION; "" means herdr's "default"
	Workspace      string // label of the workspace task tabs go in; default "fmctl"
	// Procs reads the local process table, for a stopped agent among the
	// pane shell's jobs (herdr reports pids, not process states).
	Procs proc.Table
}

// Adapter drives herdr (ogulcancelik/herdr) through its CLI, which talks to the
// session's server over a unix socket. An endpoint is `session:pane_id`; the
// pane id itself holds a colon (w1:p2), so the target splits at the first
// one. docs/backends/herdr.md lists every command used and where each fact
// about herdr comes from.
type Adapter struct {
	r backends.Runner
	o Options
}

// New returns a herdr adapter.
func New(r backends.Runner, o Options) *Adapter {
	if o.Binary == "" {
		o.Binary = "herdr"
	}
	if o.DefaultSession == "" {
		o.DefaultSession = "default"
	}
	if o.Workspace == "" {
		o.Workspace = "fmctl"
	}
	if o.Procs == nil {
		o.Procs = proc.NewTable(r)
	}
	return &Adapter{r: r, o: o}
}

// herdrMinProtocol is the oldest herdr protocol fmctl is verified against
// (herdr 0.7.0/0.7.1 report 14).
const herdrMinProtocol = 14

// Bracketed-paste markers. herdr's `pane send-text` writes its bytes to the
// pane unchanged, so these reach the program exactly as a terminal paste would.
const (
	herdrPasteStart = "\x1b[200~"
	herdrPasteEnd   = "\x1b[201~"
)

func (h *Adapter) Name() string { return "herdr" }

// run calls herdr on one session: `herdr <command words> --session S
// <operands>`. The explicit --session is what routes a call (HERDR_SESSION
// alone is not honoured once another server is bound, per firstmate's
// verification on 0.7.1); herdr strips it from anywhere ahead of a "--", so it
// goes before the operands, one of which could be "--".
func (h *Adapter) run(ctx context.Context, session, command string, operands ...string) (backends.Output, error) {
	args := append(strings.Fields(command), "--session", session)
	return h.r.Run(ctx, backends.Cmd{Path: h.o.Binary, Args: append(args, operands...)})
}

// SplitTarget splits `session:pane_id` at the first colon.
func SplitTarget(target string) (session, pane string, err error) {
	session, pane, ok := strings.Cut(target, ":")
	if !ok || pane == "" || herdrSessionError(session) != "" || !herdrValidID(pane) {
		return "", "", fmt.Errorf("herdr endpoint '%s' is not session:pane_id", target)
	}
	return session, pane, nil
}

// herdrSessionError is herdr's own session-name rule (session::validate_name),
// so a name herdr would refuse is refused before anything runs.
func herdrSessionError(name string) string {
	switch {
	case name == "" || name == "." || name == "..":
		return "is empty, . or .."
	case len(name) > 64:
		return "is longer than 64 bytes"
	case strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "":
		return "may only contain ASCII letters, digits, '.', '_' and '-'"
	}
	return ""
}

// herdrValidID accepts herdr's public ids: atoms joined by colons (w1, w1:t2, w1:p2).
func herdrValidID(id string) bool {
	for _, part := range strings.Split(id, ":") {
		if !backends.ValidAtom(part) {
			return false
		}
	}
	return true
}

// herdrNoServer stands for a session whose server socket is absent or refuses
// connections: herdr's main then prints the io::Error (`kind: NotFound` /
// `kind: ConnectionRefused`) instead of an API error.
const herdrNoServer = "no_server"

// herdrCode is the API error code (pane_not_found, ...) a failed call printed.
// Most commands print the whole response ({"id":..,"error":{..}}) on stderr;
// `pane read` prints only the error body.
func herdrCode(err error) string {
	msg := backends.StderrOf(err)
	for _, line := range strings.Split(msg, "\n") {
		var resp struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
			Code string `json:"code"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(line)), &resp) != nil {
			continue
		}
		if resp.Error.Code != "" {
			return resp.Error.Code
		}
		if resp.Code != "" {
			return resp.Code
		}
	}
	if strings.Contains(msg, "kind: NotFound") || strings.Contains(msg, "kind: ConnectionRefused") {
		return herdrNoServer
	}
	return ""
}

// herdrPane is the part of herdr's PaneInfo and AgentInfo fmctl reads.
type herdrPane struct {
	PaneID        string `json:"pane_id"`
	WorkspaceID   string `json:"workspace_id"`
	TabID         string `json:"tab_id"`
	ForegroundCwd string `json:"foreground_cwd"`
	Agent         string `json:"agent"`
	AgentStatus   string `json:"agent_status"`
}

// herdrTab is the part of TabInfo (and of WorkspaceInfo: its id and label) fmctl reads.
type herdrTab struct {
	TabID       string `json:"tab_id"`
	WorkspaceID string `json:"workspace_id"`
	Label       string `json:"label"`
}

// herdrResult is a success response's result, whatever its type.
type herdrResult struct {
	Pane       *herdrPane  `json:"pane"`
	Agent      *herdrPane  `json:"agent"`
	Tab        *herdrTab   `json:"tab"`
	RootPane   *herdrPane  `json:"root_pane"`
	Tabs       []herdrTab  `json:"tabs"`
	Panes      []herdrPane `json:"panes"`
	Workspaces []herdrTab  `json:"workspaces"`
}

func decodeHerdr(out backends.Output) (herdrResult, error) {
	var resp struct {
		Result *herdrResult `json:"result"`
	}
	if err := json.Unmarshal(out.Stdout, &resp); err != nil || resp.Result == nil {
		return herdrResult{}, fmt.Errorf("unreadable herdr response %q", strings.TrimSpace(string(out.Stdout)))
	}
	return *resp.Result, nil
}

// herdrArgError refuses text herdr's own argument parsing would eat: herdr
// strips --session and the --remote family from anywhere on its command line
// before the subcommand sees it, even out of a text argument.
func herdrArgError(text string) error {
	switch {
	case strings.ContainsRune(text, 0):
		return errors.New("text contains a NUL byte, which no command-line argument can carry")
	case text == "--session", text == "--remote", text == "--remote-keybindings",
		strings.HasPrefix(text, "--session="), strings.HasPrefix(text, "--remote="),
		strings.HasPrefix(text, "--remote-keybindings="):
		return fmt.Errorf("herdr would read the text %q as its own option; refusing to send it", text)
	}
	return nil
}

// Pastes: what NeedsPaste says goes wrapped in bracketed-paste markers, the
// rest as typed keys.
func (h *Adapter) Pastes(text string) bool { return backends.NeedsPaste(text) }

func (h *Adapter) SendText(ctx context.Context, ep backends.Endpoint, text string) error {
	session, pane, err := SplitTarget(ep.Target)
	if err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	payload := text
	// herdr has no paste that does not also submit (`pane run` and, from
	// protocol 17, `agent prompt` both press Enter), so a multi-line or long
	// message is sent through send-text wrapped in bracketed-paste markers:
	// the agent sees one paste, and a newline inside it cannot submit early.
	if h.Pastes(text) {
		if strings.Contains(text, herdrPasteEnd) {
			return errors.New("text contains the bracketed-paste end marker ESC[201~; refusing to send it")
		}
		payload = herdrPasteStart + text + herdrPasteEnd
	}
	if err := herdrArgError(payload); err != nil {
		return err
	}
	if _, err := h.run(ctx, session, "pane send-text", pane, payload); err != nil {
		return fmt.Errorf("herdr pane send-text %s: %w", ep.Target, err)
	}
	return nil
}

// herdrKeyNames are herdr key-combo spellings. herdr parses `escape` and
// `esc` alike but has no alias for tmux's C-u (only C-c), hence ctrl+u.
var herdrKeyNames = map[harness.Key]string{
	harness.KeyEnter: "enter", harness.KeyEscape: "escape", harness.KeyCtrlC: "ctrl+c", harness.KeyCtrlU: "ctrl+u",
}

func (h *Adapter) SendKey(ctx context.Context, ep backends.Endpoint, key harness.Key) error {
	name, ok := herdrKeyNames[key]
	if !ok {
		return fmt.Errorf("herdr adapter has no mapping for key %s", key)
	}
	session, pane, err := SplitTarget(ep.Target)
	if err != nil {
		return err
	}
	if _, err := h.run(ctx, session, "pane send-keys", pane, name); err != nil {
		return fmt.Errorf("herdr pane send-keys %s %s: %w", ep.Target, name, err)
	}
	return nil
}

// Capture reads the rendered screen. `--source visible` takes no --lines, so
// herdr 0.7.1's empty answer to a `recent` read asking for fewer lines than
// the viewport cannot happen. herdr exposes no cursor position.
func (h *Adapter) Capture(ctx context.Context, ep backends.Endpoint) (backends.Screen, error) {
	session, pane, err := SplitTarget(ep.Target)
	if err != nil {
		return backends.Screen{}, err
	}
	out, err := h.run(ctx, session, "pane read", pane, "--source", "visible")
	if err != nil {
		return backends.Screen{}, fmt.Errorf("herdr pane read %s: %w", ep.Target, err)
	}
	text := strings.TrimRight(string(out.Stdout), "\n")
	if text == "" {
		return backends.Screen{}, nil
	}
	return backends.Screen{Lines: strings.Split(text, "\n")}, nil
}

// AgentState asks `agent get` first: a live agent, the case lifecycle checks
// hope for, costs one call. Only when herdr knows no agent there does `pane
// get` tell an agent-free pane (dead) from a gone one (missing).
func (h *Adapter) AgentState(ctx context.Context, ep backends.Endpoint) backends.Observation {
	session, pane, err := SplitTarget(ep.Target)
	if err != nil {
		return backends.Observation{State: backends.StateUnreadable, Detail: err.Error()}
	}
	out, err := h.run(ctx, session, "agent get", pane)
	if err == nil {
		res, derr := decodeHerdr(out)
		switch a := res.Agent; {
		case derr != nil:
			return backends.Observation{State: backends.StateUnreadable, Detail: "herdr agent get " + ep.Target + ": " + derr.Error()}
		case a == nil || a.PaneID != pane:
			// The target resolved to something other than this pane (herdr also
			// resolves agent names and labels); its status says nothing here.
			return backends.Observation{State: backends.StateUnreadable, Detail: fmt.Sprintf("herdr agent get %s answered for another pane", ep.Target)}
		case herdrTurns[a.AgentStatus] != backends.TurnUnknown:
			return h.verifyForeground(ctx, session, pane, backends.Observation{State: backends.StateAlive, Names: []string{a.Agent}, CurrentPath: a.ForegroundCwd,
				AgentStatus: a.AgentStatus, Turn: herdrTurns[a.AgentStatus], Detail: fmt.Sprintf("herdr agent %s is %s", a.Agent, a.AgentStatus)})
		default:
			return backends.Observation{State: backends.StateUnreadable, Names: []string{a.Agent},
				Detail: fmt.Sprintf("herdr agent %s has status %q", a.Agent, a.AgentStatus)}
		}
	}
	switch herdrCode(err) {
	case "agent_not_found":
	case herdrNoServer:
		return backends.Observation{State: backends.StateMissing, Detail: fmt.Sprintf("herdr session %s has no running server", session)}
	default:
		return backends.Observation{State: backends.StateUnreadable, Detail: fmt.Sprintf("herdr agent get %s: %v", ep.Target, err)}
	}
	p, err := h.paneGet(ctx, session, pane)
	if err != nil {
		switch herdrCode(err) {
		case "pane_not_found":
			return h.missingOrDrifted(ctx, session, ep, err)
		case herdrNoServer:
			return backends.Observation{State: backends.StateMissing, Detail: err.Error()}
		}
		return backends.Observation{State: backends.StateUnreadable, Detail: err.Error()}
	}
	return h.deadOrSuspended(ctx, session, pane, backends.Observation{State: backends.StateDead, CurrentPath: p.ForegroundCwd,
		Detail: fmt.Sprintf("herdr pane %s has no agent", pane)})
}

// missingOrDrifted tells a pane that is gone from one whose id drifted: herdr
// pane ids are not stable across a server restart, so when the recorded pane
// is gone but exactly one tab still carries the task's label, the record is
// stale rather than the agent gone, and every verb must refuse rather than
// act as if the endpoint were empty.
func (h *Adapter) missingOrDrifted(ctx context.Context, session string, ep backends.Endpoint, gone error) backends.Observation {
	missing := backends.Observation{State: backends.StateMissing, Detail: gone.Error()}
	if ep.TaskID == "" {
		return missing
	}
	out, err := h.run(ctx, session, "tab list")
	if err != nil {
		return missing
	}
	res, err := decodeHerdr(out)
	if err != nil {
		return missing
	}
	label := "fm-" + ep.TaskID
	var claimants []herdrTab
	for _, t := range res.Tabs {
		if t.Label == label {
			claimants = append(claimants, t)
		}
	}
	if len(claimants) != 1 {
		return missing
	}
	tab := claimants[0]
	drifted := backends.Observation{State: backends.StateDrifted, Detail: fmt.Sprintf("herdr pane %s is gone, but tab %s still carries the label %s", ep.Target, tab.TabID, label)}
	// The label alone does not make a tab the task's: one in another
	// directory is someone else's, and calling it drifted would block every
	// verb on it. What cannot be read stays drifted (refused).
	in, err := h.tabInDir(ctx, session, tab, ep.Worktree)
	if err != nil {
		drifted.Detail += " (its directory cannot be read: " + err.Error() + ")"
		return drifted
	}
	if !in {
		missing.Detail += fmt.Sprintf("; tab %s labelled %s works outside the task's worktree %s, so it is not the task's", tab.TabID, label, ep.Worktree)
		return missing
	}
	drifted.Detail += " in the task's worktree"
	return drifted
}

// tabInDir reports whether a pane of tab sits in dir (its foreground_cwd).
func (h *Adapter) tabInDir(ctx context.Context, session string, tab herdrTab, dir string) (bool, error) {
	if dir == "" {
		return false, errors.New("the record names no worktree")
	}
	out, err := h.run(ctx, session, "pane list", "--workspace", tab.WorkspaceID)
	if err != nil {
		return false, fmt.Errorf("herdr pane list: %w", err)
	}
	res, err := decodeHerdr(out)
	if err != nil || res.Panes == nil {
		return false, fmt.Errorf("herdr pane list: unreadable answer %q", strings.TrimSpace(string(out.Stdout)))
	}
	for _, p := range res.Panes {
		if p.TabID == tab.TabID && p.ForegroundCwd != "" && backends.SameDirKey(p.ForegroundCwd) == backends.SameDirKey(dir) {
			return true, nil
		}
	}
	return false, nil
}

// paneGet reads one pane, refusing an answer about another pane.
func (h *Adapter) paneGet(ctx context.Context, session, pane string) (herdrPane, error) {
	out, err := h.run(ctx, session, "pane get", pane)
	if err != nil {
		return herdrPane{}, fmt.Errorf("herdr pane get %s:%s: %w", session, pane, err)
	}
	res, err := decodeHerdr(out)
	if err != nil {
		return herdrPane{}, fmt.Errorf("herdr pane get %s:%s: %w", session, pane, err)
	}
	if res.Pane == nil || res.Pane.PaneID != pane {
		return herdrPane{}, fmt.Errorf("herdr pane get %s:%s answered for another pane", session, pane)
	}
	return *res.Pane, nil
}

// CurrentPath is the pane's foreground_cwd. Its `cwd` is where the pane
// started and does not follow a `cd` (firstmate's verification on 0.7.1).
func (h *Adapter) CurrentPath(ctx context.Context, ep backends.Endpoint) (string, error) {
	session, pane, err := SplitTarget(ep.Target)
	if err != nil {
		return "", err
	}
	p, err := h.paneGet(ctx, session, pane)
	if err != nil {
		return "", err
	}
	if p.ForegroundCwd == "" {
		return "", fmt.Errorf("herdr reports no foreground_cwd for %s", ep.Target)
	}
	return p.ForegroundCwd, nil
}

// Create opens a tab labelled spec.Label in the session's fmctl workspace,
// creating the workspace when there is none; a new workspace comes with a
// tab of its own, which becomes the task's tab by a rename.
func (h *Adapter) Create(ctx context.Context, spec backends.CreateSpec) ([]backends.Field, error) {
	session := spec.Container
	if session == "" {
		session = h.o.DefaultSession
	}
	if msg := herdrSessionError(session); msg != "" {
		return nil, fmt.Errorf("herdr session name '%s' %s", session, msg)
	}
	dir, err := filepath.Abs(spec.Dir)
	if err != nil || spec.Dir == "" {
		return nil, fmt.Errorf("herdr endpoint for %s needs a working directory (got '%s')", spec.TaskID, spec.Dir)
	}
	if err := h.checkServer(ctx, session); err != nil {
		return nil, err
	}
	workspace, err := h.findWorkspace(ctx, session, spec.Label, spec.Workspace)
	if err != nil {
		return nil, err
	}
	command, operands := "tab create", []string{"--workspace", workspace, "--cwd", dir, "--label", spec.Label, "--no-focus"}
	if workspace == "" {
		command, operands = "workspace create", []string{"--cwd", dir, "--label", h.o.Workspace, "--no-focus"}
	}
	out, err := h.run(ctx, session, command, operands...)
	if err != nil {
		return nil, fmt.Errorf("herdr %s in session %s: %w", command, session, err)
	}
	tab, root, err := createdTab(out)
	if err != nil {
		return nil, fmt.Errorf("herdr %s in session %s: %w", command, session, err)
	}
	if workspace == "" {
		if _, err := h.run(ctx, session, "tab rename", tab.TabID, spec.Label); err != nil {
			// An unlabelled tab would be invisible to the next duplicate check.
			_, _ = h.run(ctx, session, "pane close", root.PaneID)
			return nil, fmt.Errorf("herdr tab rename %s %s: %w", tab.TabID, spec.Label, err)
		}
	}
	fields := []backends.Field{
		{Key: "window", Value: session + ":" + root.PaneID},
		{Key: "herdr_session", Value: session},
		{Key: "herdr_workspace_id", Value: root.WorkspaceID},
		{Key: "herdr_tab_id", Value: tab.TabID},
		{Key: "herdr_pane_id", Value: root.PaneID},
	}
	// The pane's shell is what every process in it descends from, so its
	// pid recorded is how a caller inside the pane is known for this task
	// (authority). herdr reports it as process-info's shell_pid [H13]; a
	// pane it names none for records none, and a caller there is the
	// operator, as docs/security.md says.
	if info, err := h.processInfo(ctx, session, root.PaneID); err == nil && info.ShellPID > 1 {
		fields = append(fields, backends.Field{Key: state.KeyPanePID, Value: strconv.Itoa(info.ShellPID)})
	}
	return fields, nil
}

// checkServer is the spawn-time gate: a client older than the verified
// protocol is refused, and a session without a running server is reported
// rather than started (a server must outlive fmctl, and the Runner only runs
// commands to completion).
func (h *Adapter) checkServer(ctx context.Context, session string) error {
	out, err := h.run(ctx, session, "status", "--json")
	if err != nil {
		return fmt.Errorf("herdr status --json: %w", err)
	}
	var st struct {
		Client struct {
			Version  string `json:"version"`
			Protocol *int   `json:"protocol"`
		} `json:"client"`
		Server struct {
			Running bool `json:"running"`
		} `json:"server"`
	}
	if err := json.Unmarshal(out.Stdout, &st); err != nil || st.Client.Protocol == nil {
		return fmt.Errorf("herdr status --json gave no client protocol (%q); refusing an unverified herdr", strings.TrimSpace(string(out.Stdout)))
	}
	if *st.Client.Protocol < herdrMinProtocol {
		return fmt.Errorf("herdr %s speaks protocol %d; fmctl needs protocol %d or newer (herdr 0.7.1+; run herdr update)",
			st.Client.Version, *st.Client.Protocol, herdrMinProtocol)
	}
	if !st.Server.Running {
		return fmt.Errorf("herdr session %s has no running server; start it with `herdr --session %s server` or attach with `herdr --session %s`",
			session, session, session)
	}
	return nil
}

// findWorkspace refuses a label some tab in the session already carries
// (herdr itself allows duplicates) and returns the id of the workspace new
// tabs go in: the pinned one, which must still exist, or the session's
// fmctl workspace, "" when it does not exist yet.
func (h *Adapter) findWorkspace(ctx context.Context, session, label, pinned string) (string, error) {
	out, err := h.run(ctx, session, "tab list")
	if err != nil {
		return "", fmt.Errorf("herdr tab list in session %s: %w", session, err)
	}
	res, err := decodeHerdr(out)
	if err != nil || res.Tabs == nil {
		return "", fmt.Errorf("herdr tab list in session %s: unreadable answer %q", session, strings.TrimSpace(string(out.Stdout)))
	}
	for _, t := range res.Tabs {
		if t.Label == label {
			return "", fmt.Errorf("herdr tab %s (%s) is already labelled %s in session %s; refusing a second endpoint", t.TabID, t.WorkspaceID, label, session)
		}
	}
	out, err = h.run(ctx, session, "workspace list")
	if err != nil {
		return "", fmt.Errorf("herdr workspace list in session %s: %w", session, err)
	}
	if res, err = decodeHerdr(out); err != nil || res.Workspaces == nil {
		return "", fmt.Errorf("herdr workspace list in session %s: unreadable answer %q", session, strings.TrimSpace(string(out.Stdout)))
	}
	var found []string
	for _, w := range res.Workspaces {
		if pinned != "" && w.WorkspaceID == pinned {
			return pinned, nil
		}
		if w.Label == h.o.Workspace {
			found = append(found, w.WorkspaceID)
		}
	}
	if pinned != "" {
		return "", fmt.Errorf("herdr workspace %s is gone from session %s; refusing to place the endpoint anywhere else", pinned, session)
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%d herdr workspaces in session %s are labelled %s (%s); refusing to pick one",
		len(found), session, h.o.Workspace, strings.Join(found, ", "))
}

// createdTab reads the tab and root pane from a tab create or workspace
// create answer.
func createdTab(out backends.Output) (herdrTab, herdrPane, error) {
	res, err := decodeHerdr(out)
	if err != nil {
		return herdrTab{}, herdrPane{}, err
	}
	if res.Tab == nil || res.RootPane == nil || !herdrValidID(res.Tab.TabID) ||
		!herdrValidID(res.RootPane.PaneID) || !herdrValidID(res.RootPane.WorkspaceID) {
		return herdrTab{}, herdrPane{}, fmt.Errorf("answer names no usable tab and pane: %q", strings.TrimSpace(string(out.Stdout)))
	}
	return *res.Tab, *res.RootPane, nil
}

// Kill closes the pane; closing a tab's only pane closes the tab, and herdr
// removes a workspace whose last tab closed. A pane already gone is success.
func (h *Adapter) Kill(ctx context.Context, ep backends.Endpoint) error {
	session, pane, err := SplitTarget(ep.Target)
	if err != nil {
		return err
	}
	if _, err := h.run(ctx, session, "pane close", pane); err != nil {
		if herdrCode(err) == "pane_not_found" {
			return nil
		}
		return fmt.Errorf("herdr pane close %s: %w", ep.Target, err)
	}
	return nil
}

// herdrRecordKeys are the record fields a herdr endpoint needs.
var herdrRecordKeys = []string{"herdr_session", "herdr_workspace_id", "herdr_tab_id", "herdr_pane_id"}

func (h *Adapter) ValidateRecord(ep backends.Endpoint) error {
	window := ep.Target
	if w, ok := ep.Fields["window"]; ok && w != window {
		return fmt.Errorf("herdr record has window=%s but the endpoint is %s", w, window)
	}
	for _, k := range herdrRecordKeys {
		v := ep.Field(k)
		switch {
		case v == "":
			return fmt.Errorf("herdr record for window=%s has no %s", window, k)
		case k == "herdr_session" && herdrSessionError(v) != "":
			return fmt.Errorf("herdr record has herdr_session=%s, which %s", v, herdrSessionError(v))
		case k != "herdr_session" && !herdrValidID(v):
			return fmt.Errorf("herdr record has %s=%s, which is not a herdr id", k, v)
		}
	}
	if v, ok := ep.Fields[state.KeyPanePID]; ok && !backends.ValidPID(v) {
		return fmt.Errorf("herdr record has %s=%s, which is not a process id", state.KeyPanePID, v)
	}
	if want := ep.Field("herdr_session") + ":" + ep.Field("herdr_pane_id"); window != want {
		return fmt.Errorf("herdr record has window=%s but herdr_session:herdr_pane_id is %s", window, want)
	}
	_, _, err := SplitTarget(window)
	return err
}
