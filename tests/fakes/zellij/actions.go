package zellijfake

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// action runs one `zellij action` subcommand. The order of checks is zellij's:
// clap parses the arguments first (exit 2), then the session is resolved
// (exit 1, or the exit-0 session list), then key and pane-id values are
// converted (exit 2), then the server acts.
func (inv *invocation) action(sessionName string, hasSession bool, args []string) int {
	if len(args) == 0 {
		return inv.fail(2, "error: 'zellij action' requires a subcommand but one was not provided")
	}
	name := args[0]
	spec, ok := actionSpecs[name]
	if !ok {
		return inv.fail(2, "error: The subcommand '%s' wasn't recognized", name)
	}
	p, err := spec.parse(args[1:])
	if err != nil {
		return inv.fail(2, "%s", err)
	}
	s, code := inv.resolveSession(sessionName, hasSession)
	if s == nil {
		return code
	}
	target, code := inv.paneTarget(s, p)
	if code != 0 {
		return code
	}
	switch name {
	case "paste", "write-chars":
		return inv.typeChars(target, p.pos[0], name == "write-chars")
	case "send-keys":
		return inv.sendKeys(target, p.pos)
	case "dump-screen":
		return inv.dumpScreen(target, p)
	case "list-panes":
		if p.has("json") {
			fmt.Fprintln(inv.stdout, prettyJSON(nonNil(s.paneEntries())))
		} else {
			fmt.Fprintln(inv.stdout, s.paneTable())
		}
		return 0
	case "list-tabs":
		if p.has("json") {
			fmt.Fprintln(inv.stdout, prettyJSON(s.tabEntries()))
		} else {
			fmt.Fprintln(inv.stdout, s.tabTable())
		}
		return 0
	case "new-tab":
		return inv.newTab(s, p)
	case "go-to-tab-by-id", "close-tab-by-id":
		id, err := strconv.ParseUint(p.pos[0], 10, 64)
		if err != nil {
			return inv.fail(2, "error: Invalid value '%s' for '<ID>': invalid digit found in string", p.pos[0])
		}
		if t, _ := s.tab(id); t == nil {
			return 0 // zellij only logs "Failed to find tab with ID"
		}
		if name == "go-to-tab-by-id" {
			s.ActiveTab = id
		} else if !s.closeTab(id) {
			inv.w.removeSession(s.Name)
		}
		inv.dirty = true
		return 0
	case "close-pane":
		if !p.has("pane-id") {
			return inv.fail(2, "fake zellij: close-pane without --pane-id closes the focused pane; not emulated")
		}
		if target != nil {
			s.closePane(target.ID)
			inv.dirty = true
		}
		return 0
	}
	return inv.fail(2, "fake zellij: internal error: no handler for %s", name)
}

func nonNil(e []paneEntry) []paneEntry {
	if e == nil {
		return []paneEntry{}
	}
	return e
}

// paneTarget converts --pane-id the way zellij's PaneId::from_str does. A
// missing terminal pane, a plugin pane, or no --pane-id at all yields a nil
// target: the action then silently does nothing, as zellij's does.
func (inv *invocation) paneTarget(s *session, p parsedArgs) (*pane, int) {
	raw, ok := p.flags["pane-id"]
	if !ok {
		return nil, 0
	}
	num, isPlugin := raw, false
	switch {
	case strings.HasPrefix(raw, "terminal_"):
		num = strings.TrimPrefix(raw, "terminal_")
	case strings.HasPrefix(raw, "plugin_"):
		num, isPlugin = strings.TrimPrefix(raw, "plugin_"), true
	}
	id, err := strconv.ParseUint(num, 10, 32)
	if err != nil {
		return nil, inv.fail(2, "Malformed pane id: %s, expecting either a bare integer (eg. 1), a terminal pane id (eg. terminal_1) or a plugin pane id (eg. plugin_1)", raw)
	}
	if isPlugin {
		return nil, 0
	}
	return s.pane(id), 0
}

func (inv *invocation) typeChars(target *pane, chars string, interpretNewlines bool) int {
	if target == nil {
		return 0
	}
	if err := appendLine(inv.dir, "input.log", "text "+strconv.Quote(chars)); err != nil {
		return inv.fail(2, "fake zellij: %v", err)
	}
	inv.dirty = true
	if !interpretNewlines {
		// paste wraps the text in bracketed-paste markers: a newline inside
		// it is text, not Enter.
		target.typeText(chars)
		return 0
	}
	for _, r := range chars {
		if r == '\r' || r == '\n' {
			target.submit(inv.dir)
			continue
		}
		target.typeText(string(r))
	}
	return 0
}

func (inv *invocation) sendKeys(target *pane, keys []string) int {
	parsed := make([]key, len(keys))
	for i, k := range keys {
		pk, err := parseKey(k)
		if err != nil {
			return inv.fail(2, "Invalid key at position %d: \"%s\"\n  Error: %v", i+1, k, err)
		}
		parsed[i] = pk
	}
	if target == nil {
		return 0
	}
	for i, k := range parsed {
		if err := appendLine(inv.dir, "input.log", "key "+keys[i]); err != nil {
			return inv.fail(2, "fake zellij: %v", err)
		}
		target.pressKey(inv.dir, k)
	}
	inv.dirty = true
	return 0
}

func (inv *invocation) dumpScreen(target *pane, p parsedArgs) int {
	dump := ""
	if target != nil {
		dump = target.screen(p.has("full"))
	}
	if path, ok := p.flags["path"]; ok {
		if target == nil {
			return 0
		}
		if err := os.WriteFile(path, []byte(dump), 0o644); err != nil {
			return inv.fail(2, "fake zellij: dump-screen --path: %v", err)
		}
		return 0
	}
	fmt.Fprintln(inv.stdout, dump)
	return 0
}

func (inv *invocation) newTab(s *session, p parsedArgs) int {
	cwd, ok := p.flags["cwd"]
	if !ok || cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			wd = "/"
		}
		cwd = wd
	} else if !filepath.IsAbs(cwd) {
		wd, err := os.Getwd()
		if err != nil {
			return inv.fail(2, "fake zellij: new-tab --cwd %s: %v", cwd, err)
		}
		cwd = filepath.Join(wd, cwd)
	}
	t := s.addTab(p.flags["name"], filepath.Clean(cwd))
	inv.dirty = true
	fmt.Fprintln(inv.stdout, t.ID)
	return 0
}
