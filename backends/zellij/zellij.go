// Package zellij is the zellij adapter: a backends.Backend that drives
// zellij (0.44 or newer) through its CLI.
package zellij

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/harness"
	"fmctl/state"
)

// Options names the zellij binary and the session new endpoints go to.
type Options struct {
	Binary         string // default "zellij"
	DefaultSession string // default "firstmate"
	ProcRoot       string // default "/proc": where a pane's first process is looked for
}

// Adapter drives zellij (0.44 or newer: paste, send-keys, list-panes,
// list-tabs, go-to-tab-by-id, close-tab-by-id and --pane-id on dump-screen
// all first appear in 0.44.0). An endpoint is `session:pane_id`, the pane id
// being zellij's numeric terminal pane id, unique within the session.
//
// zellij's CLI answers a missing pane with silence and exit 0, so every
// operation that must not act blind first finds the pane in
// `list-panes --json`. It exposes no pane pid, tty or foreground process
// group, so AgentState can only say whether the pane exists.
type Adapter struct {
	r     backends.Runner
	o     Options
	sleep func(context.Context, time.Duration) error
}

// New returns a zellij adapter.
func New(r backends.Runner, o Options) *Adapter {
	if o.Binary == "" {
		o.Binary = "zellij"
	}
	if o.DefaultSession == "" {
		o.DefaultSession = "firstmate"
	}
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	return &Adapter{r: r, o: o, sleep: backends.Sleep}
}

func (z *Adapter) Name() string { return "zellij" }

// AttachCommand is the zellij client line that attaches to the endpoint's
// session.
func (z *Adapter) AttachCommand(ep backends.Endpoint) (string, bool) {
	session, _, err := SplitTarget(ep.Target)
	if err != nil {
		return "", false
	}
	return harness.QuoteIfNeeded(z.o.Binary) + " attach " + harness.QuoteIfNeeded(session), true
}

// zellijTarget is a parsed `session:pane_id`.
type zellijTarget struct {
	session string
	pane    string // decimal terminal pane id
	// panePID is the pane's first process as the record has it ("" when
	// none was recorded): zellij numbers panes from 0 again in a session
	// started anew, so only that process tells the recorded pane from one
	// that took its id.
	panePID string
}

func (t zellijTarget) String() string { return t.session + ":" + t.pane }

// SplitTarget splits `session:pane_id`.
func SplitTarget(target string) (session, pane string, err error) {
	s, p, ok := strings.Cut(target, ":")
	if !ok || !backends.ValidAtom(s) || !zellijNumeric(p) {
		return "", "", fmt.Errorf("zellij endpoint '%s' is not session:pane_id (a session name in [A-Za-z0-9._@%%+-] and a numeric pane id)", target)
	}
	return s, p, nil
}

func parseZellijTarget(target string) (zellijTarget, error) {
	s, p, err := SplitTarget(target)
	return zellijTarget{session: s, pane: p}, err
}

// recordedTarget is an endpoint's pane with the first process its record
// holds.
func recordedTarget(ep backends.Endpoint) (zellijTarget, error) {
	t, err := parseZellijTarget(ep.Target)
	t.panePID = ep.Field(state.KeyPanePID)
	return t, err
}

func zellijNumeric(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// zellijGone says the endpoint (its session or its pane) no longer exists, as
// opposed to zellij failing to answer.
type zellijGone struct {
	msg        string
	serverGone bool // its session is gone or was started anew (Observation.ServerGone)
}

func (e *zellijGone) Error() string { return e.msg }

// isZellijSessionGone recognises zellij's answers for an absent session
// (send_action_to_session in zellij's src/commands.rs). With several sessions
// running, zellij prints the session list to stdout and still exits 0, so
// stderr is checked on success too.
func isZellijSessionGone(stderr string) bool {
	return strings.Contains(stderr, "There is no active session") ||
		strings.Contains(stderr, "' not found. The following sessions are active") ||
		strings.Contains(stderr, "No active zellij sessions found")
}

func (z *Adapter) action(ctx context.Context, session string, args ...string) (backends.Output, error) {
	c := backends.Cmd{Path: z.o.Binary, Args: append([]string{"--session", session, "action"}, args...)}
	out, err := z.r.Run(ctx, c)
	stderr := string(out.Stderr)
	if err != nil {
		stderr += "\n" + backends.StderrOf(err)
	}
	if isZellijSessionGone(stderr) {
		return out, &zellijGone{msg: fmt.Sprintf("zellij session %s is not running", session), serverGone: true}
	}
	if err != nil {
		return out, &zellijFailed{action: args[0], err: err}
	}
	return out, nil
}

// zellijFailed is a zellij call that failed for a reason other than an
// absent session. Its text names the action rather than the runner's first
// non-flag word, which for `--session S action ...` would be the session.
type zellijFailed struct {
	action string
	err    error
}

func (e *zellijFailed) Error() string {
	var re *backends.RunError
	if errors.As(e.err, &re) && re.ExitCode >= 0 {
		return fmt.Sprintf("zellij action %s exited %d: %s", e.action, re.ExitCode, backends.StderrOf(e.err))
	}
	return fmt.Sprintf("zellij action %s: %v", e.action, e.err)
}

func (e *zellijFailed) Unwrap() error { return e.err }

// zellijPane is the part of a `list-panes --json` entry fmctl reads.
type zellijPane struct {
	ID       uint64  `json:"id"`
	IsPlugin bool    `json:"is_plugin"` // plugin ids are a separate namespace that reuses terminal numbers
	TabID    uint64  `json:"tab_id"`
	Command  *string `json:"pane_command"` // absent when zellij's 100 ms lookup times out
	Cwd      *string `json:"pane_cwd"`
}

type zellijTab struct {
	TabID  uint64 `json:"tab_id"`
	Name   string `json:"name"`
	Active bool   `json:"active"`
}

func (z *Adapter) listPanes(ctx context.Context, session string) ([]zellijPane, error) {
	return listJSON[zellijPane](ctx, z, session, "list-panes", "pane")
}

func (z *Adapter) listTabs(ctx context.Context, session string) ([]zellijTab, error) {
	return listJSON[zellijTab](ctx, z, session, "list-tabs", "tab")
}

// listJSON runs one of zellij's list actions with --json and decodes the
// list it prints, of what it names.
func listJSON[T any](ctx context.Context, z *Adapter, session, action, what string) ([]T, error) {
	out, err := z.action(ctx, session, action, "--json")
	if err != nil {
		return nil, err
	}
	var items []T
	if err := json.Unmarshal(out.Stdout, &items); err != nil {
		return nil, fmt.Errorf("zellij %s --json (session %s) printed no %s list: %w", action, session, what, err)
	}
	return items, nil
}

func terminalPane(panes []zellijPane, id string) (zellijPane, bool) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return zellijPane{}, false
	}
	for _, p := range panes {
		if p.ID == n && !p.IsPlugin {
			return p, true
		}
	}
	return zellijPane{}, false
}

// findPane confirms the terminal pane exists: one list-panes call. A
// recorded first process that is gone, or no longer carries the pane's
// session and id, means the session was started anew and the pane with the
// recorded id is another's: the recorded one is gone.
func (z *Adapter) findPane(ctx context.Context, t zellijTarget) (zellijPane, error) {
	panes, err := z.listPanes(ctx, t.session)
	if err != nil {
		return zellijPane{}, err
	}
	p, ok := terminalPane(panes, t.pane)
	if !ok {
		return zellijPane{}, &zellijGone{msg: fmt.Sprintf("zellij session %s has no terminal pane %s", t.session, t.pane)}
	}
	if err := z.replaced(t); err != nil {
		return zellijPane{}, err
	}
	return p, nil
}

// replaced says the pane holding t's id is not the recorded one: the
// recorded first process is gone or no longer carries the pane's session
// and id. A target with no recorded process cannot tell, and is taken as it
// is.
func (z *Adapter) replaced(t zellijTarget) error {
	pid, err := strconv.Atoi(t.panePID)
	if err != nil {
		return nil
	}
	if env, ok := paneEnvOf(z.o.ProcRoot, pid); ok && env == (zellijPaneEnv{session: t.session, pane: t.pane}) {
		return nil
	}
	return &zellijGone{msg: fmt.Sprintf("zellij session %s was started anew: pane %s's recorded first process (pid %d) is gone, and the pane now holding id %s is another's", t.session, t.pane, pid, t.pane), serverGone: true}
}

// zellijMaxArg: the text travels as one argv word, and Linux refuses a single
// argument longer than MAX_ARG_STRLEN (32 pages, 131072 bytes with its NUL).
const zellijMaxArg = 131071

// SendText uses `action paste` for every text: zellij wraps it in
// bracketed-paste markers (Tab::paste_to_pane_id), so a multi-line message
// arrives as one paste and nothing in it submits. A pane that has not enabled
// bracketed paste gets the bare text, markers stripped.
func (z *Adapter) SendText(ctx context.Context, ep backends.Endpoint, text string) error {
	t, err := recordedTarget(ep)
	if err != nil {
		return err
	}
	if len(text) > zellijMaxArg {
		return fmt.Errorf("text of %d bytes is longer than one zellij argument can carry (%d)", len(text), zellijMaxArg)
	}
	if _, err := z.findPane(ctx, t); err != nil {
		return err
	}
	// "--" keeps text that starts with '-' from being read as an option.
	if _, err := z.action(ctx, t.session, "paste", "--pane-id", t.pane, "--", text); err != nil {
		return fmt.Errorf("zellij paste into %s: %w", t, err)
	}
	return nil
}

// zellijKeyNames are send-keys spellings (KeyWithModifier::from_str): the
// bare key is matched case-insensitively against zellij's own names, so
// Escape is "Esc" ("Escape" is rejected), and a modified key is one argv word
// with a space ("Ctrl c"; "C-c" and "Ctrl+c" are rejected).
var zellijKeyNames = map[harness.Key]string{
	harness.KeyEscape: "Esc", harness.KeyEnter: "Enter", harness.KeyCtrlC: "Ctrl c", harness.KeyCtrlU: "Ctrl u",
}

func (z *Adapter) SendKey(ctx context.Context, ep backends.Endpoint, key harness.Key) error {
	name, ok := zellijKeyNames[key]
	if !ok {
		return fmt.Errorf("zellij adapter has no mapping for key %s", key)
	}
	t, err := recordedTarget(ep)
	if err != nil {
		return err
	}
	if _, err := z.findPane(ctx, t); err != nil {
		return err
	}
	if _, err := z.action(ctx, t.session, "send-keys", "--pane-id", t.pane, name); err != nil {
		return fmt.Errorf("zellij send-keys %q to %s: %w", name, t, err)
	}
	return nil
}

// Capture reads the viewport with dump-screen. zellij prints an empty dump
// for a pane that does not exist, so only an empty answer costs a second call
// to tell a blank pane from a missing one. The cursor row is not reported:
// list-panes gives the cursor only for a focused pane, and dump-screen joins
// soft-wrapped rows, so rows and dump lines do not correspond.
func (z *Adapter) Capture(ctx context.Context, ep backends.Endpoint) (backends.Screen, error) {
	t, err := recordedTarget(ep)
	if err != nil {
		return backends.Screen{}, err
	}
	// Another task's pane that took the recorded id is not read at all.
	if err := z.replaced(t); err != nil {
		return backends.Screen{}, err
	}
	out, err := z.action(ctx, t.session, "dump-screen", "--pane-id", t.pane)
	if err != nil {
		return backends.Screen{}, fmt.Errorf("zellij dump-screen %s: %w", t, err)
	}
	text := strings.TrimSuffix(string(out.Stdout), "\n")
	if text == "" {
		if _, err := z.findPane(ctx, t); err != nil {
			return backends.Screen{}, err
		}
		return backends.Screen{}, nil
	}
	return backends.Screen{Lines: strings.Split(text, "\n")}, nil
}

// AgentState can only establish whether the pane exists: zellij's CLI has no
// pane pid, tty or foreground process group to classify, and its
// pane_command is one child of the pane's shell picked from `ps -ao
// ppid,args` (any child, not the foreground group) or silently missing when a
// 100 ms lookup times out. Neither "alive" nor "dead" could be trusted, so a
// present pane is unverified and exit/relaunch refuse on this backend.
func (z *Adapter) AgentState(ctx context.Context, ep backends.Endpoint) backends.Observation {
	t, err := recordedTarget(ep)
	if err != nil {
		return backends.Observation{State: backends.StateUnreadable, Detail: err.Error()}
	}
	p, err := z.findPane(ctx, t)
	if err != nil {
		var gone *zellijGone
		if errors.As(err, &gone) {
			return backends.Observation{State: backends.StateMissing, Detail: gone.msg, ServerGone: gone.serverGone}
		}
		return backends.Observation{State: backends.StateUnreadable, Detail: err.Error()}
	}
	detail := fmt.Sprintf("zellij pane %s exists; zellij reports no pane pid or foreground process, so what runs there is unverified", t)
	if p.Command != nil && *p.Command != "" {
		detail += fmt.Sprintf(" (pane_command %q)", *p.Command)
	}
	obs := backends.Observation{State: backends.StateUnverified, Detail: detail}
	// pane_command is the only process evidence zellij gives: a harness
	// named there is a harness child of the pane's shell. It is no proof the
	// agent is in the foreground, so the state stays unverified; fm-send's
	// gate accepts it as the positive evidence it is, and nothing less.
	if p.Command != nil {
		if argv := strings.Fields(*p.Command); len(argv) > 0 {
			if name := harness.AgentName(filepath.Base(argv[0]), argv); name != "" {
				obs.Names = []string{name}
			}
		}
	}
	if p.Cwd != nil {
		obs.CurrentPath = *p.Cwd
	}
	return obs
}

// CurrentPath is list-panes' pane_cwd: the working directory of the pane's
// own shell process. It follows a `cd` in that shell but not one made inside
// a nested shell the pane runs.
func (z *Adapter) CurrentPath(ctx context.Context, ep backends.Endpoint) (string, error) {
	t, err := recordedTarget(ep)
	if err != nil {
		return "", err
	}
	p, err := z.findPane(ctx, t)
	if err != nil {
		return "", err
	}
	if p.Cwd == nil || *p.Cwd == "" {
		return "", fmt.Errorf("zellij list-panes gave no pane_cwd for %s", t)
	}
	return *p.Cwd, nil
}

// Create opens a tab named spec.Label whose one shell pane starts in
// spec.Dir, starting the session in the background first if it is not
// running. zellij does not keep tab names unique, so the duplicate check is
// ours.
func (z *Adapter) Create(ctx context.Context, spec backends.CreateSpec) ([]backends.Field, error) {
	session := spec.Container
	if session == "" {
		session = z.o.DefaultSession
	}
	if !backends.ValidAtom(session) {
		return nil, fmt.Errorf("zellij session name '%s' has characters outside [A-Za-z0-9._@%%+-]", session)
	}
	if spec.Label == "" || spec.Dir == "" {
		return nil, fmt.Errorf("zellij endpoint for task %s needs a label and a directory", spec.TaskID)
	}
	tabs, err := z.listTabs(ctx, session)
	var gone *zellijGone
	if errors.As(err, &gone) {
		tabs, err = z.startSession(ctx, session)
	}
	if err != nil {
		return nil, err
	}
	var prev *zellijTab
	for i, tb := range tabs {
		if tb.Name == spec.Label {
			return nil, fmt.Errorf("zellij tab '%s' already exists in session %s; refusing to create a second endpoint for task %s", spec.Label, session, spec.TaskID)
		}
		if tb.Active && prev == nil {
			prev = &tabs[i]
		}
	}
	// The "=" forms keep a directory or label that starts with '-' a value.
	out, err := z.action(ctx, session, "new-tab", "--cwd="+spec.Dir, "--name="+spec.Label)
	if err != nil {
		return nil, fmt.Errorf("zellij new-tab '%s': %w", spec.Label, err)
	}
	tabID := strings.TrimSpace(string(out.Stdout))
	if !zellijNumeric(tabID) {
		return nil, fmt.Errorf("zellij new-tab '%s' printed no tab id (%q)", spec.Label, tabID)
	}
	pane, err := z.paneOfTab(ctx, session, tabID)
	if err != nil {
		_, _ = z.action(ctx, session, "close-tab-by-id", tabID)
		return nil, err
	}
	// new-tab moves every attached client to the new tab and 0.44 has no flag
	// against it (--no-focus arrives in 0.45), so the view is put back. A
	// failure here leaves a human looking at the new tab, nothing worse.
	if prev != nil && strconv.FormatUint(prev.TabID, 10) != tabID {
		_, _ = z.action(ctx, session, "go-to-tab-by-id", strconv.FormatUint(prev.TabID, 10))
	}
	fields := []backends.Field{
		{Key: "window", Value: session + ":" + pane},
		{Key: "zellij_session", Value: session},
		{Key: "zellij_tab_id", Value: tabID},
		{Key: "zellij_pane_id", Value: pane},
	}
	// The pane's first process recorded is how a caller inside the pane is
	// known for this task (authority). zellij's CLI names none, so it is
	// found through the environment its server gives the pane; a pane
	// whose process cannot be told apart records none, and a caller there
	// is the operator, as docs/security.md says.
	if pid, err := z.panePID(ctx, session, pane); err == nil {
		fields = append(fields, backends.Field{Key: state.KeyPanePID, Value: strconv.Itoa(pid)})
	}
	return fields, nil
}

// startSession runs `attach -b`, which creates a detached session and
// returns once its server has daemonised, then waits for the session to
// answer. A concurrent fmctl that created it first makes attach exit 1
// ("Session already exists"), so only the wait decides.
func (z *Adapter) startSession(ctx context.Context, session string) ([]zellijTab, error) {
	_, startErr := z.r.Run(ctx, backends.Cmd{Path: z.o.Binary, Args: []string{"attach", "-b", session}})
	var err error
	for i := 0; i < 20; i++ {
		var tabs []zellijTab
		tabs, err = z.listTabs(ctx, session)
		var gone *zellijGone
		if !errors.As(err, &gone) {
			return tabs, err
		}
		if serr := z.sleep(ctx, 250*time.Millisecond); serr != nil {
			return nil, serr
		}
	}
	if startErr != nil {
		return nil, fmt.Errorf("start zellij session %s: %w", session, startErr)
	}
	return nil, fmt.Errorf("zellij session %s did not come up within 5s: %w", session, err)
}

// paneOfTab finds the new tab's terminal pane. Its plugin panes (tab bar,
// status bar) are skipped; a tab's panes can lag its id by a moment, so a
// miss is retried briefly.
func (z *Adapter) paneOfTab(ctx context.Context, session, tabID string) (string, error) {
	want, _ := strconv.ParseUint(tabID, 10, 64)
	for i := 0; i < 5; i++ {
		panes, err := z.listPanes(ctx, session)
		if err != nil {
			return "", err
		}
		for _, p := range panes {
			if p.TabID == want && !p.IsPlugin {
				return strconv.FormatUint(p.ID, 10), nil
			}
		}
		if err := z.sleep(ctx, 100*time.Millisecond); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("zellij tab %s in session %s has no terminal pane", tabID, session)
}

// Kill closes the pane's tab when the pane is all it holds: closing a tab's
// only pane leaves an empty tab behind in zellij, while close-tab-by-id
// removes both. A pane sharing its tab with others is closed alone. An
// endpoint already gone is not an error.
func (z *Adapter) Kill(ctx context.Context, ep backends.Endpoint) error {
	t, err := recordedTarget(ep)
	if err != nil {
		return err
	}
	panes, err := z.listPanes(ctx, t.session)
	var gone *zellijGone
	if errors.As(err, &gone) {
		return nil
	}
	if err != nil {
		return err
	}
	p, ok := terminalPane(panes, t.pane)
	if !ok || z.replaced(t) != nil {
		// Gone, or its id now another task's pane, which is not ours to close.
		return nil
	}
	shared := false
	for _, o := range panes {
		if o.TabID == p.TabID && !o.IsPlugin && o.ID != p.ID {
			shared = true
		}
	}
	args := []string{"close-tab-by-id", strconv.FormatUint(p.TabID, 10)}
	if shared {
		args = []string{"close-pane", "--pane-id", t.pane}
	}
	if _, err := z.action(ctx, t.session, args...); err != nil && !errors.As(err, &gone) {
		return fmt.Errorf("zellij %s for %s: %w", args[0], t, err)
	}
	return nil
}

// zellijRecordKeys are the record fields a zellij endpoint carries besides window=.
var zellijRecordKeys = []string{"zellij_session", "zellij_tab_id", "zellij_pane_id"}

func (z *Adapter) ValidateRecord(ep backends.Endpoint) error {
	t, err := parseZellijTarget(ep.Target)
	if err != nil {
		return err
	}
	for _, k := range zellijRecordKeys {
		if ep.Field(k) == "" {
			return fmt.Errorf("zellij record for %s has no %s=", ep.Target, k)
		}
	}
	for _, k := range []string{"zellij_tab_id", "zellij_pane_id"} {
		if !zellijNumeric(ep.Field(k)) {
			return fmt.Errorf("zellij record %s=%s is not a numeric id", k, ep.Field(k))
		}
	}
	if v, ok := ep.Fields[state.KeyPanePID]; ok && !backends.ValidPID(v) {
		return fmt.Errorf("zellij record has %s=%s, which is not a process id", state.KeyPanePID, v)
	}
	if want := ep.Field("zellij_session") + ":" + ep.Field("zellij_pane_id"); want != t.String() {
		return fmt.Errorf("zellij record window=%s does not match zellij_session:zellij_pane_id (%s)", ep.Target, want)
	}
	return nil
}
