package herdrfake

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The JSON shapes below follow herdr 0.7.1's src/api/schema (TabInfo,
// WorkspaceInfo, PaneInfo, AgentInfo, PaneReadResult) field for field, in
// serde's field order; a response's "result" is tagged by "type".

type workspaceInfo struct {
	WorkspaceID string `json:"workspace_id"`
	Number      int    `json:"number"`
	Label       string `json:"label"`
	Focused     bool   `json:"focused"`
	PaneCount   int    `json:"pane_count"`
	TabCount    int    `json:"tab_count"`
	ActiveTabID string `json:"active_tab_id"`
	AgentStatus string `json:"agent_status"`
}

type tabInfo struct {
	TabID       string `json:"tab_id"`
	WorkspaceID string `json:"workspace_id"`
	Number      int    `json:"number"`
	Label       string `json:"label"`
	Focused     bool   `json:"focused"`
	PaneCount   int    `json:"pane_count"`
	AgentStatus string `json:"agent_status"`
}

type paneInfo struct {
	PaneID        string `json:"pane_id"`
	TerminalID    string `json:"terminal_id"`
	WorkspaceID   string `json:"workspace_id"`
	TabID         string `json:"tab_id"`
	Focused       bool   `json:"focused"`
	Cwd           string `json:"cwd,omitempty"`
	ForegroundCwd string `json:"foreground_cwd,omitempty"`
	Agent         string `json:"agent,omitempty"`
	AgentStatus   string `json:"agent_status"`
	Revision      uint64 `json:"revision"`
}

type agentInfo struct {
	TerminalID    string `json:"terminal_id"`
	Agent         string `json:"agent,omitempty"`
	AgentStatus   string `json:"agent_status"`
	WorkspaceID   string `json:"workspace_id"`
	TabID         string `json:"tab_id"`
	PaneID        string `json:"pane_id"`
	Focused       bool   `json:"focused"`
	Cwd           string `json:"cwd,omitempty"`
	ForegroundCwd string `json:"foreground_cwd,omitempty"`
	Revision      uint64 `json:"revision"`
}

func (f *fake) agentStatus(p *Pane) string {
	switch {
	case !p.isAgent() && !f.registered(p):
		return "unknown"
	case f.flag("busy"), p.Working:
		return "working"
	default:
		return "idle"
	}
}

func (f *fake) sess() *Session { return f.state.session(f.session) }

func (f *fake) wsInfo(s *Session, w *Workspace) workspaceInfo {
	info := workspaceInfo{WorkspaceID: w.ID, Label: w.Label, Focused: s.Active == w.ID,
		TabCount: len(w.Tabs), ActiveTabID: w.ActiveTab, AgentStatus: "unknown"}
	for i, x := range s.Workspaces {
		if x == w {
			info.Number = i + 1
		}
	}
	for _, t := range w.Tabs {
		info.PaneCount += len(t.Panes)
		if st := f.tabStatus(t); st != "unknown" {
			info.AgentStatus = st
		}
	}
	return info
}

func (f *fake) tabStatus(t *Tab) string {
	for _, p := range t.Panes {
		if st := f.agentStatus(p); st != "unknown" {
			return st
		}
	}
	return "unknown"
}

func (f *fake) tabInfo(s *Session, w *Workspace, t *Tab) tabInfo {
	return tabInfo{TabID: t.ID, WorkspaceID: w.ID, Number: t.Number, Label: t.Label,
		Focused: s.Active == w.ID && w.ActiveTab == t.ID, PaneCount: len(t.Panes), AgentStatus: f.tabStatus(t)}
}

func (f *fake) paneInfo(s *Session, r paneRef) paneInfo {
	info := paneInfo{PaneID: r.pane.ID, TerminalID: r.pane.TerminalID, WorkspaceID: r.ws.ID, TabID: r.tab.ID,
		Focused: s.Active == r.ws.ID && r.ws.ActiveTab == r.tab.ID, Cwd: r.pane.Cwd,
		ForegroundCwd: r.pane.ForegroundCwd, AgentStatus: f.agentStatus(r.pane), Revision: r.pane.Revision}
	switch {
	case r.pane.isAgent():
		info.Agent = r.pane.Command
	case f.registered(r.pane):
		info.Agent = r.pane.Stopped
	}
	return info
}

// --- status -----------------------------------------------------------------

func (f *fake) status(args []string) int {
	switch {
	case len(args) == 1 && args[0] == "--json":
	case len(args) == 0, args[0] == "server", args[0] == "client", args[0] == "help", args[0] == "--help", args[0] == "-h":
		return f.notEmulated("herdr status " + strings.Join(args, " "))
	default:
		fmt.Fprintln(f.stderr, "herdr status commands:")
		fmt.Fprintln(f.stderr, "  herdr status [--json]         show local client and running server status")
		fmt.Fprintln(f.stderr, "  herdr status server [--json]  show running server status")
		fmt.Fprintln(f.stderr, "  herdr status client [--json]  show local client binary status")
		return 2
	}
	version := f.env("FAKE_HERDR_VERSION")
	if version == "" {
		version = "0.7.1"
	}
	protocol := 14
	if p := f.env("FAKE_HERDR_PROTOCOL"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			fmt.Fprintf(f.stderr, "fake herdr: FAKE_HERDR_PROTOCOL=%q is not a number\n", p)
			return 2
		}
		protocol = n
	}
	var session *string // herdr reports null for the default session
	if f.session != "default" {
		session = &f.session
	}
	socket := filepath.Join(f.dir, "sessions", f.session, "herdr.sock")
	exe, _ := os.Executable()
	type client struct {
		Version  string  `json:"version"`
		Channel  string  `json:"channel"`
		Protocol int     `json:"protocol"`
		Binary   string  `json:"binary"`
		Session  *string `json:"session"`
	}
	type server struct {
		Status        string          `json:"status"`
		Running       bool            `json:"running"`
		Version       *string         `json:"version"`
		Protocol      *int            `json:"protocol"`
		Capabilities  *map[string]any `json:"capabilities"`
		Compatible    *bool           `json:"compatible"`
		Socket        string          `json:"socket"`
		Session       *string         `json:"session"`
		RestartNeeded *bool           `json:"restart_needed"`
	}
	no := false
	srv := server{Status: "not_running", Socket: socket, Session: session, RestartNeeded: &no}
	if f.serverRunning() {
		yes := true
		caps := map[string]any{"live_handoff": false}
		srv = server{Status: "running", Running: true, Version: &version, Protocol: &protocol,
			Capabilities: &caps, Compatible: &yes, Socket: socket, Session: session, RestartNeeded: &no}
	}
	return f.printJSON(struct {
		Client client `json:"client"`
		Server server `json:"server"`
		Update struct {
			RestartNeeded *bool `json:"restart_needed"`
		} `json:"update"`
	}{Client: client{version, "stable", protocol, exe, session}, Server: srv,
		Update: struct {
			RestartNeeded *bool `json:"restart_needed"`
		}{&no}})
}

// --- workspace and tab --------------------------------------------------------

var realWorkspaceSubs = []string{"list", "create", "get", "focus", "rename", "close"}
var realTabSubs = []string{"list", "create", "get", "focus", "rename", "close"}

func (f *fake) workspaceCmd(args []string) int {
	return f.subcommand("workspace", args, realWorkspaceSubs, map[string]func([]string) int{
		"list":   f.workspaceList,
		"create": f.workspaceCreate,
	})
}

func (f *fake) tabCmd(args []string) int {
	return f.subcommand("tab", args, realTabSubs, map[string]func([]string) int{
		"list":   f.tabList,
		"create": f.tabCreate,
		"rename": f.tabRename,
	})
}

func (f *fake) workspaceList(args []string) int {
	if len(args) != 0 {
		return f.usage("usage: herdr workspace list")
	}
	if !f.connect() {
		return 1
	}
	s := f.sess()
	list := []workspaceInfo{}
	for _, w := range s.Workspaces {
		list = append(list, f.wsInfo(s, w))
	}
	return f.respond("cli:workspace:list", tagged("workspace_list", field{"workspaces", list}))
}

// createFlags parses the options workspace create and tab create share.
type createFlags struct {
	workspace, cwd, label string
	focus                 bool
}

func (f *fake) parseCreate(args []string, allowWorkspace bool) (createFlags, int) {
	var c createFlags
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--workspace", "--cwd", "--label", "--env":
			if a == "--workspace" && !allowWorkspace {
				return c, f.usage("unknown option: " + a)
			}
			if i+1 >= len(args) {
				return c, f.usage("missing value for " + a)
			}
			v := args[i+1]
			i++
			switch a {
			case "--workspace":
				c.workspace = v
			case "--cwd":
				c.cwd = v
			case "--label":
				c.label = v
			case "--env":
				key, _, ok := strings.Cut(v, "=")
				switch {
				case !ok:
					return c, f.usage("env must use KEY=VALUE")
				case key == "":
					return c, f.usage("env key must not be empty")
				}
			}
		case "--focus":
			c.focus = true
		case "--no-focus":
			c.focus = false
		default:
			return c, f.usage("unknown option: " + a)
		}
	}
	return c, -1
}

func (f *fake) workspaceCreate(args []string) int {
	c, code := f.parseCreate(args, false)
	if code >= 0 {
		return code
	}
	if !f.connect() {
		return 1
	}
	s := f.sess()
	cwd := orRoot(c.cwd)
	w, t := f.state.newWorkspace(s, c.label, cwd, c.focus)
	f.dirty = true
	r := paneRef{w, t, t.Panes[0]}
	return f.respond("cli:workspace:create", tagged("workspace_created",
		field{"workspace", f.wsInfo(s, w)}, field{"tab", f.tabInfo(s, w, t)}, field{"root_pane", f.paneInfo(s, r)}))
}

func orRoot(cwd string) string {
	if cwd == "" {
		return "/"
	}
	return cwd
}

// listed parses the one option tab list and pane list take, --workspace W,
// connects, and returns the session and the workspaces listed (all, or W);
// code is an exit code >= 0 when it already answered.
func (f *fake) listed(args []string, requestID string) (*Session, []*Workspace, int) {
	ws := ""
	for i := 0; i < len(args); i++ {
		if args[i] != "--workspace" {
			return nil, nil, f.usage("unknown option: " + args[i])
		}
		if i+1 >= len(args) {
			return nil, nil, f.usage("missing value for --workspace")
		}
		ws = args[i+1]
		i++
	}
	if !f.connect() {
		return nil, nil, 1
	}
	s := f.sess()
	if ws == "" {
		return s, s.Workspaces, -1
	}
	w := s.workspace(ws)
	if w == nil {
		return nil, nil, f.apiError(requestID, "workspace_not_found", "workspace "+ws+" not found")
	}
	return s, []*Workspace{w}, -1
}

// paneList is `pane list [--workspace W]`: every pane's PaneInfo, in
// workspace, tab and pane order.
func (f *fake) paneList(args []string) int {
	s, wss, code := f.listed(args, "cli:pane:list")
	if code >= 0 {
		return code
	}
	list := []paneInfo{}
	for _, w := range wss {
		for _, t := range w.Tabs {
			for _, p := range t.Panes {
				list = append(list, f.paneInfo(s, paneRef{ws: w, tab: t, pane: p}))
			}
		}
	}
	return f.respond("cli:pane:list", tagged("pane_list", field{"panes", list}))
}

func (f *fake) tabList(args []string) int {
	s, wss, code := f.listed(args, "cli:tab:list")
	if code >= 0 {
		return code
	}
	list := []tabInfo{}
	for _, w := range wss {
		for _, t := range w.Tabs {
			list = append(list, f.tabInfo(s, w, t))
		}
	}
	return f.respond("cli:tab:list", tagged("tab_list", field{"tabs", list}))
}

func (f *fake) tabCreate(args []string) int {
	c, code := f.parseCreate(args, true)
	if code >= 0 {
		return code
	}
	if !f.connect() {
		return 1
	}
	s := f.sess()
	var w *Workspace
	switch {
	case c.workspace != "":
		if w = s.workspace(c.workspace); w == nil {
			return f.apiError("cli:tab:create", "workspace_not_found", "workspace "+c.workspace+" not found")
		}
	case s.Active != "":
		w = s.workspace(s.Active)
	default:
		return f.apiError("cli:tab:create", "workspace_not_found", "no active workspace")
	}
	cwd := c.cwd
	if cwd == "" && len(w.Tabs) > 0 {
		cwd = w.Tabs[0].Panes[0].ForegroundCwd
	}
	t := f.state.newTab(w, c.label, orRoot(cwd))
	if c.focus {
		s.Active, w.ActiveTab = w.ID, t.ID
	}
	f.dirty = true
	return f.respond("cli:tab:create", tagged("tab_created",
		field{"tab", f.tabInfo(s, w, t)}, field{"root_pane", f.paneInfo(s, paneRef{w, t, t.Panes[0]})}))
}

func (f *fake) tabRename(args []string) int {
	if len(args) < 2 {
		return f.usage("usage: herdr tab rename <tab_id> <label>")
	}
	if !f.connect() {
		return 1
	}
	s := f.sess()
	w, t, ok := s.findTab(args[0])
	if !ok {
		return f.apiError("cli:tab:rename", "tab_not_found", "tab "+args[0]+" not found")
	}
	t.Label = strings.Join(args[1:], " ")
	f.dirty = true
	return f.respond("cli:tab:rename", tagged("tab_info", field{"tab", f.tabInfo(s, w, t)}))
}
