package zellijfake

import (
	"encoding/json"
	"fmt"
	"strings"
)

// paneEntry is zellij 0.44's PaneListEntry (zellij-utils/src/data.rs): the
// PaneInfo fields flattened, then tab_id, tab_position, tab_name, and the
// pane_command / pane_cwd enrichment (omitted when absent, as serde's
// skip_serializing_if does). Field order follows the Rust struct, which is
// the order serde_json prints.
type paneEntry struct {
	ID                 uint64         `json:"id"`
	IsPlugin           bool           `json:"is_plugin"`
	IsFocused          bool           `json:"is_focused"`
	IsFullscreen       bool           `json:"is_fullscreen"`
	IsFloating         bool           `json:"is_floating"`
	IsSuppressed       bool           `json:"is_suppressed"`
	Title              string         `json:"title"`
	Exited             bool           `json:"exited"`
	ExitStatus         *int           `json:"exit_status"`
	IsHeld             bool           `json:"is_held"`
	PaneX              int            `json:"pane_x"`
	PaneContentX       int            `json:"pane_content_x"`
	PaneY              int            `json:"pane_y"`
	PaneContentY       int            `json:"pane_content_y"`
	PaneRows           int            `json:"pane_rows"`
	PaneContentRows    int            `json:"pane_content_rows"`
	PaneColumns        int            `json:"pane_columns"`
	PaneContentColumns int            `json:"pane_content_columns"`
	CursorCoordinates  *[2]int        `json:"cursor_coordinates_in_pane"`
	TerminalCommand    *string        `json:"terminal_command"`
	PluginURL          *string        `json:"plugin_url"`
	IsSelectable       bool           `json:"is_selectable"`
	IndexInPaneGroup   map[string]int `json:"index_in_pane_group"`
	DefaultFg          *string        `json:"default_fg"`
	DefaultBg          *string        `json:"default_bg"`
	TabID              uint64         `json:"tab_id"`
	TabPosition        int            `json:"tab_position"`
	TabName            string         `json:"tab_name"`
	PaneCommand        *string        `json:"pane_command,omitempty"`
	PaneCwd            *string        `json:"pane_cwd,omitempty"`
}

// tabEntry is zellij 0.44's TabInfo, in struct order.
type tabEntry struct {
	Position                     int     `json:"position"`
	Name                         string  `json:"name"`
	Active                       bool    `json:"active"`
	PanesToHide                  int     `json:"panes_to_hide"`
	IsFullscreenActive           bool    `json:"is_fullscreen_active"`
	IsSyncPanesActive            bool    `json:"is_sync_panes_active"`
	AreFloatingPanesVisible      bool    `json:"are_floating_panes_visible"`
	OtherFocusedClients          []int   `json:"other_focused_clients"`
	ActiveSwapLayoutName         *string `json:"active_swap_layout_name"`
	IsSwapLayoutDirty            bool    `json:"is_swap_layout_dirty"`
	ViewportRows                 int     `json:"viewport_rows"`
	ViewportColumns              int     `json:"viewport_columns"`
	DisplayAreaRows              int     `json:"display_area_rows"`
	DisplayAreaColumns           int     `json:"display_area_columns"`
	SelectableTiledPanesCount    int     `json:"selectable_tiled_panes_count"`
	SelectableFloatingPanesCount int     `json:"selectable_floating_panes_count"`
	TabID                        uint64  `json:"tab_id"`
	HasBellNotification          bool    `json:"has_bell_notification"`
	IsFlashingBell               bool    `json:"is_flashing_bell"`
}

func strp(s string) *string { return &s }

func (s *session) paneEntries() []paneEntry {
	var out []paneEntry
	for pos, t := range s.Tabs {
		for i, id := range t.Plugins {
			url := []string{"zellij:tab-bar", "zellij:status-bar"}[i%2]
			out = append(out, paneEntry{
				ID: id, IsPlugin: true, Title: strings.TrimPrefix(url, "zellij:"),
				PluginURL: strp(url), IndexInPaneGroup: map[string]int{},
				PaneRows: 1, PaneContentRows: 1, PaneColumns: viewportColumns, PaneContentColumns: viewportColumns,
				TabID: t.ID, TabPosition: pos, TabName: t.Name,
			})
		}
		for _, p := range s.Panes {
			if p.Tab != t.ID {
				continue
			}
			out = append(out, paneEntry{
				ID: p.ID, IsFocused: true, Title: p.Command, IsSelectable: true,
				PaneY: 1, PaneContentY: 1, IndexInPaneGroup: map[string]int{},
				PaneRows: viewportRows, PaneContentRows: viewportRows, PaneColumns: viewportColumns, PaneContentColumns: viewportColumns,
				TabID: t.ID, TabPosition: pos, TabName: t.Name,
				PaneCommand: strp(p.Command), PaneCwd: strp(p.Cwd),
			})
		}
	}
	return out
}

func (s *session) tabEntries() []tabEntry {
	out := []tabEntry{}
	for pos, t := range s.Tabs {
		n := 0
		for _, p := range s.Panes {
			if p.Tab == t.ID {
				n++
			}
		}
		out = append(out, tabEntry{
			Position: pos, Name: t.Name, Active: t.ID == s.ActiveTab, OtherFocusedClients: []int{},
			ViewportRows: viewportRows, ViewportColumns: viewportColumns,
			DisplayAreaRows: viewportRows + 2, DisplayAreaColumns: viewportColumns,
			SelectableTiledPanesCount: n, TabID: t.ID,
		})
	}
	return out
}

// prettyJSON matches serde_json::to_string_pretty: two-space indent, and an
// empty array printed as "[]".
func prettyJSON(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "[]"
	}
	return string(data)
}

func (s *session) paneTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %-9s %s\n", "PANE_ID", "TYPE", "TITLE")
	for _, e := range s.paneEntries() {
		kind, id := "terminal", fmt.Sprintf("terminal_%d", e.ID)
		if e.IsPlugin {
			kind, id = "plugin", fmt.Sprintf("plugin_%d", e.ID)
		}
		fmt.Fprintf(&b, "%-12s %-9s %s\n", id, kind, e.Title)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (s *session) tabTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-7s %-9s %s\n", "TAB_ID", "POSITION", "NAME")
	for pos, t := range s.Tabs {
		fmt.Fprintf(&b, "%-7d %-9d %s\n", t.ID, pos, t.Name)
	}
	return strings.TrimRight(b.String(), "\n")
}

// sessionList is zellij's print_sessions for live sessions, oldest first.
func sessionList(names []string, noFormatting, short, reverse bool, current string) string {
	if reverse {
		rev := make([]string, len(names))
		for i, n := range names {
			rev[len(names)-1-i] = n
		}
		names = rev
	}
	var lines []string
	for _, n := range names {
		suffix := ""
		if n == current {
			suffix = "(current)"
		}
		switch {
		case short:
			lines = append(lines, n)
		case noFormatting:
			lines = append(lines, fmt.Sprintf("%s [Created 0s ago] %s", n, suffix))
		default:
			lines = append(lines, fmt.Sprintf("\x1b[32;1m%s\x1b[m [Created \x1b[35;1m0s\x1b[m ago] %s", n, suffix))
		}
	}
	return strings.Join(lines, "\n")
}
