package zellijfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// world is everything the fake server knows, kept in one JSON file so
// concurrent invocations (and test assertions) see one consistent picture.
type world struct {
	Sessions []*session `json:"sessions"` // in creation order
}

type session struct {
	Name         string  `json:"name"`
	NextTabID    uint64  `json:"next_tab_id"`
	NextPaneID   uint64  `json:"next_pane_id"`
	NextPluginID uint64  `json:"next_plugin_id"`
	ActiveTab    uint64  `json:"active_tab"`
	Tabs         []*tab  `json:"tabs"` // in position order
	Panes        []*pane `json:"panes"`
}

type tab struct {
	ID   uint64 `json:"id"`
	Name string `json:"name"`
	// Plugins are the tab-bar and status-bar panes every default-layout tab
	// carries. Their ids are a separate namespace from terminal ids, so a
	// plugin and a terminal can share a bare id, as in real zellij.
	Plugins []uint64 `json:"plugins"`
}

type pane struct {
	ID         uint64   `json:"id"`
	Tab        uint64   `json:"tab"`
	Cwd        string   `json:"cwd"`
	Command    string   `json:"command"` // foreground program
	Composer   string   `json:"composer"`
	Transcript []string `json:"transcript"`
}

const stateFile = "state.json"

func loadWorld(dir string) (*world, error) {
	w := &world{}
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return w, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, w); err != nil {
		return nil, fmt.Errorf("fake zellij: corrupt %s: %w", stateFile, err)
	}
	return w, nil
}

func saveWorld(dir string, w *world) error {
	data, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, stateFile))
}

// lockDir serialises invocations: every call is one read-modify-write of the
// state file plus log appends, all under one exclusive flock.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func appendLine(dir, name, line string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func flagFile(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

func (w *world) session(name string) *session {
	for _, s := range w.Sessions {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (w *world) names() []string {
	var out []string
	for _, s := range w.Sessions {
		out = append(out, s.Name)
	}
	return out
}

func (w *world) removeSession(name string) {
	for i, s := range w.Sessions {
		if s.Name == name {
			w.Sessions = append(w.Sessions[:i], w.Sessions[i+1:]...)
			return
		}
	}
}

// newSession mirrors a default-layout session: one tab "Tab #1" holding one
// shell pane.
func (w *world) newSession(name, cwd string) *session {
	s := &session{Name: name}
	w.Sessions = append(w.Sessions, s)
	s.addTab("", cwd)
	return s
}

func (s *session) addTab(name, cwd string) *tab {
	if name == "" {
		name = fmt.Sprintf("Tab #%d", len(s.Tabs)+1)
	}
	t := &tab{ID: s.NextTabID, Name: name, Plugins: []uint64{s.NextPluginID, s.NextPluginID + 1}}
	s.NextTabID++
	s.NextPluginID += 2
	s.Tabs = append(s.Tabs, t)
	s.Panes = append(s.Panes, &pane{ID: s.NextPaneID, Tab: t.ID, Cwd: cwd, Command: "bash"})
	s.NextPaneID++
	s.ActiveTab = t.ID
	return t
}

func (s *session) tab(id uint64) (*tab, int) {
	for i, t := range s.Tabs {
		if t.ID == id {
			return t, i
		}
	}
	return nil, -1
}

func (s *session) pane(id uint64) *pane {
	for _, p := range s.Panes {
		if p.ID == id {
			return p
		}
	}
	return nil
}

func (s *session) closePane(id uint64) {
	for i, p := range s.Panes {
		if p.ID == id {
			s.Panes = append(s.Panes[:i], s.Panes[i+1:]...)
			return
		}
	}
}

// closeTab removes a tab with its panes; focus moves to the first remaining
// tab. It reports whether the session still has a tab (zellij ends a session
// whose last tab closes).
func (s *session) closeTab(id uint64) bool {
	_, i := s.tab(id)
	if i < 0 {
		return true
	}
	s.Tabs = append(s.Tabs[:i], s.Tabs[i+1:]...)
	kept := s.Panes[:0]
	for _, p := range s.Panes {
		if p.Tab != id {
			kept = append(kept, p)
		}
	}
	s.Panes = kept
	if len(s.Tabs) == 0 {
		return false
	}
	if s.ActiveTab == id {
		s.ActiveTab = s.Tabs[0].ID
	}
	return true
}
