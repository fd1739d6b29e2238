package herdrfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// State is everything the fake remembers between invocations, kept as one
// JSON file (state.json) under $FAKE_HERDR_DIR.
type State struct {
	Sessions     map[string]*Session `json:"sessions"`
	NextTerminal int                 `json:"next_terminal"`
}

// Session is one named herdr server namespace ("default" included).
type Session struct {
	NextWorkspace int          `json:"next_workspace"`
	Active        string       `json:"active"` // focused workspace id
	Workspaces    []*Workspace `json:"workspaces"`
}

// Workspace holds tabs; its id is w<n>, and tab and pane ids are qualified by
// it (w1:t1, w1:p1), as herdr's public ids are.
type Workspace struct {
	ID        string `json:"id"`
	Label     string `json:"label"`
	NextTab   int    `json:"next_tab"`
	NextPane  int    `json:"next_pane"`
	ActiveTab string `json:"active_tab"`
	Tabs      []*Tab `json:"tabs"`
}

// Tab holds one pane (the fake never splits).
type Tab struct {
	ID     string  `json:"id"`
	Number int     `json:"number"`
	Label  string  `json:"label"`
	Panes  []*Pane `json:"panes"`
}

// Pane is one terminal and the program in its foreground.
type Pane struct {
	ID            string   `json:"id"`
	TerminalID    string   `json:"terminal_id"`
	Cwd           string   `json:"cwd"`            // where the pane started (herdr's `cwd`)
	ForegroundCwd string   `json:"foreground_cwd"` // where its shell is now (herdr's `foreground_cwd`)
	Command       string   `json:"command"`        // foreground program: "bash" or an agent name
	Composer      string   `json:"composer"`       // typed, unsubmitted input
	Transcript    []string `json:"transcript"`
	Revision      uint64   `json:"revision"`
	Stopped       string   `json:"stopped,omitempty"` // an agent Ctrl+Z stopped: a job of the shell
	Working       bool     `json:"working,omitempty"` // the agent's turn runs (the turns switch)
	Stale         string   `json:"stale,omitempty"`   // submitted text the TUI still draws (slow-redraw)
}

// LoadState reads the fake's state from dir; a missing file is an empty state.
func LoadState(dir string) (*State, error) {
	st := &State{Sessions: map[string]*Session{}}
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("fake herdr state %s: %w", filepath.Join(dir, "state.json"), err)
	}
	if st.Sessions == nil {
		st.Sessions = map[string]*Session{}
	}
	return st, nil
}

func saveState(dir string, st *State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".state.json.%d", os.Getpid()))
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "state.json"))
}

// lockDir serialises invocations: each one reads, changes and writes the
// whole state, so two concurrent calls must not interleave.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, "state.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// publicAlphabet is herdr's base-32 alphabet for public ids (no I, L, O, U).
const publicAlphabet = "123456789ABCDEFGHJKMNPQRSTVWXYZ0"

func encodePublic(n int) string {
	if n <= 0 {
		return "0"
	}
	var out []byte
	for n > 0 {
		out = append([]byte{publicAlphabet[(n-1)%len(publicAlphabet)]}, out...)
		n = (n - 1) / len(publicAlphabet)
	}
	return string(out)
}

func (st *State) session(name string) *Session {
	s := st.Sessions[name]
	if s == nil {
		s = &Session{NextWorkspace: 1}
		st.Sessions[name] = s
	}
	return s
}

func (s *Session) workspace(id string) *Workspace {
	for _, w := range s.Workspaces {
		if w.ID == id {
			return w
		}
	}
	return nil
}

// paneRef is a pane with the tab and workspace that hold it.
type paneRef struct {
	ws   *Workspace
	tab  *Tab
	pane *Pane
}

func (s *Session) findPane(id string) (paneRef, bool) {
	for _, w := range s.Workspaces {
		for _, t := range w.Tabs {
			for _, p := range t.Panes {
				if p.ID == id {
					return paneRef{w, t, p}, true
				}
			}
		}
	}
	return paneRef{}, false
}

func (s *Session) findTab(id string) (*Workspace, *Tab, bool) {
	for _, w := range s.Workspaces {
		for _, t := range w.Tabs {
			if t.ID == id {
				return w, t, true
			}
		}
	}
	return nil, nil, false
}

// newWorkspace adds a workspace seeded with one tab, as `workspace create`
// does; the first workspace of a session is focused whatever was asked.
func (st *State) newWorkspace(s *Session, label, cwd string, focus bool) (*Workspace, *Tab) {
	w := &Workspace{ID: "w" + encodePublic(s.NextWorkspace), NextTab: 1, NextPane: 1}
	s.NextWorkspace++
	if label == "" {
		label = filepath.Base(cwd)
	}
	w.Label = label
	s.Workspaces = append(s.Workspaces, w)
	if focus || s.Active == "" {
		s.Active = w.ID
	}
	t := st.newTab(w, "", cwd)
	w.ActiveTab = t.ID
	return w, t
}

func (st *State) newTab(w *Workspace, label, cwd string) *Tab {
	n := w.NextTab
	w.NextTab++
	if label == "" {
		label = strconv.Itoa(n)
	}
	t := &Tab{ID: w.ID + ":t" + encodePublic(n), Number: n, Label: label}
	st.NextTerminal++
	p := &Pane{
		ID:            w.ID + ":p" + encodePublic(w.NextPane),
		TerminalID:    fmt.Sprintf("term_fake%x", st.NextTerminal),
		Cwd:           cwd,
		ForegroundCwd: cwd,
		Command:       "bash",
	}
	w.NextPane++
	t.Panes = []*Pane{p}
	w.Tabs = append(w.Tabs, t)
	return t
}

// closePane removes a pane; an emptied tab goes with it, and an emptied
// workspace too (herdr deletes a workspace when its last tab closes).
func (s *Session) closePane(ref paneRef) {
	var panes []*Pane
	for _, p := range ref.tab.Panes {
		if p != ref.pane {
			panes = append(panes, p)
		}
	}
	ref.tab.Panes = panes
	if len(panes) > 0 {
		return
	}
	var tabs []*Tab
	for _, t := range ref.ws.Tabs {
		if t != ref.tab {
			tabs = append(tabs, t)
		}
	}
	ref.ws.Tabs = tabs
	if len(tabs) > 0 {
		if ref.ws.ActiveTab == ref.tab.ID {
			ref.ws.ActiveTab = tabs[0].ID
		}
		return
	}
	var wss []*Workspace
	for _, w := range s.Workspaces {
		if w != ref.ws {
			wss = append(wss, w)
		}
	}
	s.Workspaces = wss
	if s.Active == ref.ws.ID {
		s.Active = ""
		if len(wss) > 0 {
			s.Active = wss[0].ID
		}
	}
}
