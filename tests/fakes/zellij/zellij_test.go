package zellijfake

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type fake struct {
	t   *testing.T
	dir string
	env map[string]string
}

func newFake(t *testing.T) *fake {
	t.Helper()
	return &fake{t: t, dir: t.TempDir(), env: map[string]string{}}
}

func (f *fake) run(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if k == "FAKE_ZELLIJ_DIR" {
			return f.dir
		}
		return f.env[k]
	}
	code = run(args, getenv, &out, &errb)
	return out.String(), errb.String(), code
}

// ok runs a call that must succeed quietly and returns its stdout.
func (f *fake) ok(args ...string) string {
	f.t.Helper()
	out, errs, code := f.run(args...)
	if code != 0 || errs != "" {
		f.t.Fatalf("zellij %q: exit %d, stderr %q", args, code, errs)
	}
	return out
}

// act runs `zellij --session s action ...`.
func (f *fake) act(args ...string) string {
	f.t.Helper()
	return f.ok(append([]string{"--session", "s", "action"}, args...)...)
}

func (f *fake) touch(name string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), nil, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fake) file(name string) string {
	data, _ := os.ReadFile(filepath.Join(f.dir, name))
	return string(data)
}

type paneJSON struct {
	ID       uint64  `json:"id"`
	IsPlugin bool    `json:"is_plugin"`
	TabID    uint64  `json:"tab_id"`
	Command  *string `json:"pane_command"`
	Cwd      *string `json:"pane_cwd"`
}

func (f *fake) terminal(id uint64) paneJSON {
	f.t.Helper()
	var panes []paneJSON
	if err := json.Unmarshal([]byte(f.act("list-panes", "--json")), &panes); err != nil {
		f.t.Fatal(err)
	}
	for _, p := range panes {
		if p.ID == id && !p.IsPlugin {
			return p
		}
	}
	f.t.Fatalf("no terminal pane %d", id)
	return paneJSON{}
}

type tabJSON struct {
	TabID  uint64 `json:"tab_id"`
	Name   string `json:"name"`
	Active bool   `json:"active"`
}

func (f *fake) tabs() []tabJSON {
	f.t.Helper()
	var tabs []tabJSON
	if err := json.Unmarshal([]byte(f.act("list-tabs", "--json")), &tabs); err != nil {
		f.t.Fatal(err)
	}
	return tabs
}

// started is a fake with session s: tab 0 holding shell pane 0.
func started(t *testing.T) *fake {
	f := newFake(t)
	f.ok("attach", "-b", "s")
	return f
}

func TestRejectsWhatZellijDoesNot(t *testing.T) {
	f := started(t)
	cases := [][]string{
		{"--sesion", "s", "action", "list-panes"}, // global typo
		{"frobnicate"}, // unknown subcommand
		{"--session", "s", "action", "list-pane", "--json"},            // unknown action
		{"--session", "s", "action", "list-panes", "--jsn"},            // unknown flag
		{"--session", "s", "action", "dump-screen", "/tmp/x"},          // 0.43 positional path
		{"--session", "s", "action", "send-keys", "-p", "0", "Escape"}, // zellij spells it Esc
		{"--session", "s", "action", "send-keys", "-p", "0", "C-c"},
		{"--session", "s", "action", "send-keys", "-p", "0", "Ctrl+c"},
		{"--session", "s", "action", "send-keys", "-p", "0"},              // keys required
		{"--session", "s", "action", "paste", "--pane-id", "0"},           // chars required
		{"--session", "s", "action", "paste", "--pane-id", "x1", "hi"},    // malformed id
		{"--session", "s", "action", "paste", "-p", "0", "-p", "0", "hi"}, // duplicate flag
		{"--session", "s", "action", "paste", "-p", "0", "a", "b"},        // one CHARS only
		{"--session", "s", "action", "new-tab", "--layout", "x.kdl"},      // real, not emulated
		{"--session", "s", "action", "new-tab", "--no-focus"},             // 0.45 only
		{"--session", "s", "action", "go-to-tab-by-id", "one"},
		{"--session", "s", "action", "close-pane"},
		{"attach", "s"},
		{"list-sessions", "--json"},
	}
	for _, args := range cases {
		_, errs, code := f.run(args...)
		if code == 0 || errs == "" {
			t.Errorf("zellij %q: exit %d, stderr %q; want a rejection", args, code, errs)
		}
	}
	if log := f.file("input.log"); log != "" {
		t.Errorf("rejected calls delivered input: %q", log)
	}
	if n := strings.Count(f.file("calls.log"), "\n"); n != len(cases)+1 {
		t.Errorf("calls.log has %d lines, want %d", n, len(cases)+1)
	}
}

func TestNeedsStateDir(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"list-sessions"}, func(string) string { return "" }, &out, &errb); code == 0 || errb.Len() == 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

func TestSessionResolutionLikeZellij(t *testing.T) {
	f := newFake(t)
	if _, errs, code := f.run("--session", "s", "action", "list-panes", "--json"); code != 1 || !strings.Contains(errs, "There is no active session!") {
		t.Fatalf("no sessions: exit %d, stderr %q", code, errs)
	}
	f.ok("attach", "-b", "s")
	if _, errs, code := f.run("attach", "-b", "s"); code != 1 || !strings.Contains(errs, "Session already exists") {
		t.Fatalf("second attach -b: exit %d, stderr %q", code, errs)
	}
	if _, errs, code := f.run("--session", "nope", "action", "list-panes", "--json"); code != 1 || !strings.Contains(errs, "Session 'nope' not found") {
		t.Fatalf("one session, wrong name: exit %d, stderr %q", code, errs)
	}
	f.ok("attach", "-b", "other")
	// With several sessions zellij lists them on stdout and exits 0.
	out, errs, code := f.run("--session", "nope", "action", "list-panes", "--json")
	if code != 0 || !strings.Contains(errs, "Session 'nope' not found") || !strings.Contains(out, "other") {
		t.Fatalf("several sessions, wrong name: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if got := f.ok("list-sessions", "--short", "--no-formatting"); got != "s\nother\n" {
		t.Fatalf("list-sessions: %q", got)
	}
}

func TestTabsAndPanes(t *testing.T) {
	f := started(t)
	dir := t.TempDir()
	if got := f.act("new-tab", "--cwd", dir, "--name", "fm-t1"); got != "1\n" {
		t.Fatalf("new-tab printed %q", got)
	}
	tabs := f.tabs()
	if len(tabs) != 2 || tabs[1].Name != "fm-t1" || !tabs[1].Active || tabs[0].Active {
		t.Fatalf("new-tab should focus the new tab: %+v", tabs)
	}
	f.act("go-to-tab-by-id", "0")
	if tabs := f.tabs(); !tabs[0].Active || tabs[1].Active {
		t.Fatalf("go-to-tab-by-id 0: %+v", tabs)
	}
	p := f.terminal(1)
	if p.TabID != 1 || *p.Cwd != dir || *p.Command != "bash" {
		t.Fatalf("pane 1: %+v", p)
	}
	// Plugin panes reuse terminal numbers: only is_plugin tells them apart.
	if out := f.act("list-panes", "--json"); strings.Count(out, `"id": 1,`) != 2 {
		t.Fatalf("want a plugin and a terminal both numbered 1:\n%s", out)
	}
	// Closing a tab's only pane leaves the tab; close-tab-by-id removes it.
	f.act("close-pane", "--pane-id", "1")
	if !strings.Contains(f.act("list-tabs", "--json"), `"fm-t1"`) {
		t.Fatal("close-pane removed the tab")
	}
	f.act("close-tab-by-id", "1")
	if strings.Contains(f.act("list-tabs", "--json"), `"fm-t1"`) {
		t.Fatal("close-tab-by-id left the tab")
	}
	// Missing targets: silence and exit 0, as zellij answers them.
	f.act("close-tab-by-id", "9")
	f.act("paste", "--pane-id", "9", "--", "lost")
	f.act("send-keys", "--pane-id", "9", "Enter")
	if got := f.act("dump-screen", "--pane-id", "9"); got != "\n" {
		t.Fatalf("dump of a missing pane: %q", got)
	}
}

func TestAgentEmulation(t *testing.T) {
	f := started(t)
	f.act("paste", "--pane-id", "0", "--", "cd /work/x")
	f.act("send-keys", "--pane-id", "0", "Enter")
	if p := f.terminal(0); *p.Cwd != "/work/x" {
		t.Fatalf("cd: cwd %q", *p.Cwd)
	}
	f.act("paste", "--pane-id", "0", "--", "FOO=1 env -u BAR -u BAZ /opt/bin/claude --model m")
	f.act("send-keys", "--pane-id", "0", "Enter")
	if p := f.terminal(0); *p.Command != "claude" {
		t.Fatalf("launch: command %q", *p.Command)
	}
	f.act("paste", "--pane-id", "0", "--", "line one\nline two")
	screen := f.act("dump-screen", "--pane-id", "0")
	if !strings.Contains(screen, "❯ line one\nline two\n") || !strings.Contains(screen, "$ FOO=1 env") {
		t.Fatalf("a pasted newline must stay in the composer:\n%s", screen)
	}
	f.act("send-keys", "--pane-id", "0", "Ctrl u")
	if screen := f.act("dump-screen", "--pane-id", "0"); !strings.Contains(screen, "\n❯ \n") {
		t.Fatalf("Ctrl u should clear the composer:\n%s", screen)
	}
	f.act("send-keys", "--pane-id", "0", "Esc", "Ctrl c")
	if p := f.terminal(0); *p.Command != "claude" {
		t.Fatal("Esc/Ctrl c stopped the agent without interrupt-stops")
	}
	f.touch("interrupt-stops")
	f.act("send-keys", "--pane-id", "0", "Ctrl c")
	if p := f.terminal(0); *p.Command != "bash" {
		t.Fatalf("Ctrl c with interrupt-stops: command %q", *p.Command)
	}
	// write-chars types a newline as Enter.
	f.act("write-chars", "--pane-id", "0", "codex\n")
	if p := f.terminal(0); *p.Command != "codex" {
		t.Fatalf("write-chars launch: command %q", *p.Command)
	}
	f.touch("never-dies")
	f.act("paste", "--pane-id", "0", "--", "/exit")
	f.act("send-keys", "--pane-id", "0", "Enter")
	if p := f.terminal(0); *p.Command != "codex" {
		t.Fatal("/exit stopped the agent despite never-dies")
	}
	os.Remove(filepath.Join(f.dir, "never-dies"))
	f.touch("stuck")
	f.act("paste", "--pane-id", "0", "--", "/quit")
	f.act("send-keys", "--pane-id", "0", "Enter")
	if screen := f.act("dump-screen", "--pane-id", "0"); !strings.Contains(screen, "› /quit\n") {
		t.Fatalf("stuck: Enter must leave the composer:\n%s", screen)
	}
	os.Remove(filepath.Join(f.dir, "stuck"))
	f.act("send-keys", "--pane-id", "0", "Enter")
	if p := f.terminal(0); *p.Command != "bash" {
		t.Fatalf("/quit: command %q", *p.Command)
	}
	// Input without --pane-id reaches no terminal.
	f.act("paste", "dropped")
	want := strings.Join([]string{
		`text "cd /work/x"`, `key Enter`,
		`text "FOO=1 env -u BAR -u BAZ /opt/bin/claude --model m"`, `key Enter`,
		`text "line one\nline two"`, `key Ctrl u`, `key Esc`, `key Ctrl c`, `key Ctrl c`,
		`text "codex\n"`, `text "/exit"`, `key Enter`, `text "/quit"`, `key Enter`, `key Enter`,
	}, "\n") + "\n"
	if got := f.file("input.log"); got != want {
		t.Fatalf("input.log:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(f.file("calls.log"), "--session s action paste --pane-id 0 -- \"line one\\nline two\"\n") {
		t.Fatalf("calls.log:\n%s", f.file("calls.log"))
	}
}
