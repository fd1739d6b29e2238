package herdrfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type env struct {
	t    *testing.T
	dir  string
	vars map[string]string
}

func newEnv(t *testing.T) *env {
	dir := t.TempDir()
	return &env{t: t, dir: dir, vars: map[string]string{"FAKE_HERDR_DIR": dir}}
}

type result struct {
	code           int
	stdout, stderr string
}

func (e *env) run(args ...string) result {
	var out, errb bytes.Buffer
	code := Run(args, func(k string) string { return e.vars[k] }, &out, &errb)
	return result{code, out.String(), errb.String()}
}

// ok runs a command that must succeed and returns its stdout.
func (e *env) ok(args ...string) string {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("herdr %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

func (e *env) touch(name string) {
	if err := os.WriteFile(filepath.Join(e.dir, name), nil, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) file(name string) string {
	b, _ := os.ReadFile(filepath.Join(e.dir, name))
	return string(b)
}

// jsonField walks a decoded JSON value along dotted keys.
func jsonField(t *testing.T, s string, path string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %q", s)
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: no object at %s in %s", path, k, s)
		}
		v = m[k]
	}
	return v
}

// pane makes a workspace and returns its root pane id.
func (e *env) pane(session string) string {
	e.t.Helper()
	out := e.ok("--session", session, "workspace", "create", "--cwd", e.dir, "--label", "fmctl", "--no-focus")
	return jsonField(e.t, out, "result.root_pane.pane_id").(string)
}

func (e *env) screenLast(session, pane string) string {
	e.t.Helper()
	rows := strings.Split(strings.TrimRight(e.ok("--session", session, "pane", "read", pane, "--source", "visible"), "\n"), "\n")
	return rows[len(rows)-1]
}

func (e *env) command(session, pane string) string {
	st, err := LoadState(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	r, ok := st.session(session).findPane(pane)
	if !ok {
		e.t.Fatalf("no pane %s", pane)
	}
	return r.pane.Command
}

func TestRejectsWhatTheRealCLIRejects(t *testing.T) {
	e := newEnv(t)
	p := e.pane("default")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bogus"}, 1, "unknown command: bogus"},
		{[]string{"--bogus", "pane", "get", p}, 1, "unknown option: --bogus"},
		{[]string{"pane", "bogus"}, 2, "herdr pane commands:"},
		{[]string{"pane"}, 2, "herdr pane commands:"},
		{[]string{"tab", "create", "--name", "x"}, 2, "unknown option: --name"},
		{[]string{"workspace", "create", "--workspace", "w1"}, 2, "unknown option: --workspace"},
		{[]string{"tab", "create", "--label"}, 2, "missing value for --label"},
		{[]string{"tab", "create", "--env", "NOEQUALS"}, 2, "env must use KEY=VALUE"},
		{[]string{"workspace", "list", "extra"}, 2, "usage: herdr workspace list"},
		{[]string{"pane", "get"}, 2, "usage: herdr pane get"},
		{[]string{"pane", "get", p, "extra"}, 2, "usage: herdr pane get"},
		{[]string{"pane", "send-text", p}, 2, "usage: herdr pane send-text"},
		{[]string{"pane", "send-keys", p}, 2, "usage: herdr pane send-keys"},
		{[]string{"pane", "read", p, "--lines"}, 2, "missing value for --lines"},
		{[]string{"pane", "read", p, "--tail", "3"}, 2, "unknown option: --tail"},
		{[]string{"pane", "read", p, "--source", "screen"}, 1, "invalid read source: screen"},
		{[]string{"pane", "read", p, "--lines", "-1"}, 1, "invalid value for --lines: -1"},
		{[]string{"agent", "get"}, 2, "usage: herdr agent get"},
		{[]string{"status", "--yaml"}, 2, "herdr status commands:"},
		{[]string{"--session"}, 2, "missing value for --session"},
		{[]string{"--session", "no spaces", "status", "--json"}, 2, "session name may only contain"},
		{[]string{"--remote", "box", "pane", "get", p}, 2, "--remote can only be used with the default launch command"},
		{[]string{"pane", "send-keys", p, "C-u"}, 1, `"code":"invalid_key"`},
		{[]string{"pane", "send-keys", p, "ctrl+"}, 1, `"code":"invalid_key"`},
		// Real commands the fake does not emulate fail loudly too.
		{[]string{"pane", "layout"}, 3, "does not emulate"},
		{[]string{"pane", "list", "--tab", "w1:t1"}, 2, "unknown option: --tab"},
		{[]string{"tab", "close", "w1:t1"}, 3, "does not emulate"},
		{[]string{"agent", "send", p, "hi"}, 3, "does not emulate"},
		{[]string{"server"}, 3, "does not emulate"},
		{[]string{"status"}, 3, "does not emulate"},
	}
	for _, c := range cases {
		r := e.run(c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("herdr %q: exit %d, stderr %q; want exit %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	if in := e.file("input.log"); in != "" {
		t.Errorf("rejected commands delivered input: %q", in)
	}
}

func TestNotFoundErrorsHaveHerdrsShape(t *testing.T) {
	e := newEnv(t)
	p := e.pane("default")
	r := e.run("pane", "get", "w9:p9")
	if r.code != 1 || jsonField(t, r.stderr, "error.code") != "pane_not_found" || jsonField(t, r.stderr, "id") != "cli:pane:get" {
		t.Errorf("pane get unknown: %+v", r)
	}
	// pane read prints only the error body.
	r = e.run("pane", "read", "w9:p9")
	if r.code != 1 || jsonField(t, r.stderr, "code") != "pane_not_found" {
		t.Errorf("pane read unknown: %+v", r)
	}
	// agent get resolves a target, so an unknown pane is agent_not_found too.
	for _, target := range []string{p, "w9:p9"} {
		r = e.run("agent", "get", target)
		if r.code != 1 || jsonField(t, r.stderr, "error.code") != "agent_not_found" {
			t.Errorf("agent get %s: %+v", target, r)
		}
	}
	r = e.run("tab", "create", "--workspace", "w7")
	if r.code != 1 || jsonField(t, r.stderr, "error.code") != "workspace_not_found" {
		t.Errorf("tab create in unknown workspace: %+v", r)
	}
}

func TestSessionRouting(t *testing.T) {
	e := newEnv(t)
	e.pane("alpha")
	out := e.ok("--session=alpha", "tab", "list")
	if n := len(jsonField(t, out, "result.tabs").([]any)); n != 1 {
		t.Errorf("alpha has %d tabs", n)
	}
	out = e.ok("tab", "list")
	if n := len(jsonField(t, out, "result.tabs").([]any)); n != 0 {
		t.Errorf("default sees alpha's tabs: %s", out)
	}
	e.vars["HERDR_SESSION"] = "alpha"
	if n := len(jsonField(t, e.ok("tab", "list"), "result.tabs").([]any)); n != 1 {
		t.Error("HERDR_SESSION was not honoured")
	}
	// The flag wins over the environment, wherever it sits before "--".
	if n := len(jsonField(t, e.ok("tab", "list", "--session", "default"), "result.tabs").([]any)); n != 0 {
		t.Error("a trailing --session lost to HERDR_SESSION")
	}
	st := e.ok("status", "--json", "--session", "alpha")
	if jsonField(t, st, "client.session") != "alpha" || jsonField(t, st, "client.protocol") != 14.0 ||
		jsonField(t, st, "client.version") != "0.7.1" || jsonField(t, st, "server.running") != true {
		t.Errorf("status --json: %s", st)
	}
	if jsonField(t, e.ok("--session", "default", "status", "--json"), "client.session") != nil {
		t.Error("the default session should report session null")
	}
}

func TestNoServer(t *testing.T) {
	e := newEnv(t)
	p := e.pane("default")
	e.touch("no-server")
	if st := e.ok("status", "--json"); jsonField(t, st, "server.running") != false || jsonField(t, st, "server.status") != "not_running" {
		t.Errorf("status with no server: %s", st)
	}
	r := e.run("pane", "get", p)
	if r.code != 1 || !strings.Contains(r.stderr, "kind: NotFound") {
		t.Errorf("pane get with no server: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "no-server"), []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("pane", "get", p)
	if r := e.run("--session", "other", "tab", "list"); r.code != 1 {
		t.Errorf("session other should have no server: %+v", r)
	}
}

func TestAgentLaunchAndExit(t *testing.T) {
	e := newEnv(t)
	p := e.pane("default")
	e.ok("pane", "send-text", p, "A=1 B=2 env -u CLAUDECODE -uX C=3 /opt/bin/claude --model opus")
	if c := e.command("default", p); c != "bash" {
		t.Fatalf("typing alone launched %s", c)
	}
	e.ok("pane", "send-keys", p, "enter")
	if c := e.command("default", p); c != "claude" {
		t.Fatalf("after Enter the pane runs %s", c)
	}
	out := e.ok("agent", "get", p)
	if jsonField(t, out, "result.type") != "agent_info" || jsonField(t, out, "result.agent.agent_status") != "idle" ||
		jsonField(t, out, "result.agent.agent") != "claude" || jsonField(t, out, "result.agent.pane_id") != p {
		t.Errorf("agent get: %s", out)
	}
	e.touch("busy")
	if s := jsonField(t, e.ok("agent", "get", p), "result.agent.agent_status"); s != "working" {
		t.Errorf("busy agent status %v", s)
	}
	e.ok("pane", "run", p, "/exit")
	if c := e.command("default", p); c != "bash" {
		t.Errorf("/exit left %s running", c)
	}
	e.ok("pane", "run", p, "grok")
	e.touch("never-dies")
	e.ok("pane", "run", p, "/quit")
	if c := e.command("default", p); c != "grok" {
		t.Errorf("never-dies: /quit ended the agent (%s)", c)
	}
	// Not an agent: a word that only contains a harness name.
	q := e.pane("other")
	e.ok("--session", "other", "pane", "run", q, "echo claude")
	if c := e.command("other", q); c != "bash" {
		t.Errorf("`echo claude` launched %s", c)
	}
}

func TestInterrupts(t *testing.T) {
	e := newEnv(t)
	p := e.pane("default")
	e.ok("pane", "run", p, "codex")
	e.ok("pane", "send-keys", p, "escape")
	e.ok("pane", "send-keys", p, "C-c")
	if c := e.command("default", p); c != "codex" {
		t.Fatalf("without interrupt-stops an interrupt ended the agent (%s)", c)
	}
	e.touch("interrupt-stops")
	e.ok("pane", "send-keys", p, "esc")
	if c := e.command("default", p); c != "bash" {
		t.Errorf("escape with interrupt-stops left %s", c)
	}
	e.ok("pane", "run", p, "codex")
	e.ok("pane", "send-keys", p, "ctrl+c")
	if c := e.command("default", p); c != "bash" {
		t.Errorf("ctrl+c with interrupt-stops left %s", c)
	}
}

func TestComposerAndScreen(t *testing.T) {
	e := newEnv(t)
	p := e.pane("default")
	e.ok("pane", "run", p, "grok") // drawn with a bare "> " composer
	e.ok("pane", "send-text", p, "hello", "world")
	if got := e.screenLast("default", p); got != "> hello world" {
		t.Errorf("composer row %q", got)
	}
	e.ok("pane", "send-keys", p, "ctrl+u")
	if got := e.screenLast("default", p); got != ">" {
		t.Errorf("after ctrl+u: %q", got)
	}
	// A bracketed paste lands whole; a raw CR submits.
	e.ok("pane", "send-text", p, "\x1b[200~one\r\ntwo\x1b[201~")
	if got := e.screenLast("default", p); got != "> one⏎two" {
		t.Errorf("after a paste: %q", got)
	}
	e.ok("pane", "send-text", p, "\r")
	screen := e.ok("pane", "read", p, "--source", "visible")
	if !strings.Contains(screen, "you: one⏎two\n>\n") {
		t.Errorf("submitted paste not in transcript:\n%s", screen)
	}
	e.touch("stuck")
	e.ok("pane", "send-text", p, "stays")
	e.ok("pane", "send-keys", p, "Enter")
	if got := e.screenLast("default", p); got != "> stays" {
		t.Errorf("stuck: Enter cleared the composer (%q)", got)
	}
	// herdr 0.7.1 answers a recent read shorter than the viewport with nothing.
	if out := e.ok("pane", "read", p, "--source", "recent", "--lines", "5"); out != "" {
		t.Errorf("short recent read returned %q", out)
	}
	if out := e.ok("pane", "read", p, "--lines", "30"); !strings.HasSuffix(out, "> stays\n") {
		t.Errorf("recent read: %q", out)
	}
}

func TestShellLineFeedSubmitsAndCd(t *testing.T) {
	e := newEnv(t)
	p := e.pane("default")
	sub := filepath.Join(e.dir, "sub dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	e.ok("pane", "send-text", p, "cd 'sub dir'\nopencode")
	if c := e.command("default", p); c != "bash" {
		t.Errorf("an unsubmitted second line launched %s", c)
	}
	fg := jsonField(t, e.ok("pane", "get", p), "result.pane.foreground_cwd")
	if fg != sub {
		t.Errorf("foreground_cwd = %v, want %s", fg, sub)
	}
	if cwd := jsonField(t, e.ok("pane", "get", p), "result.pane.cwd"); cwd != e.dir {
		t.Errorf("cwd moved with cd: %v", cwd)
	}
	e.ok("pane", "send-keys", p, "enter")
	if c := e.command("default", p); c != "opencode" {
		t.Errorf("after Enter: %s", c)
	}
	e.ok("pane", "run", p, "/exit")
	e.ok("pane", "run", p, "cd /nonexistent/dir")
	if fg := jsonField(t, e.ok("pane", "get", p), "result.pane.foreground_cwd"); fg != sub {
		t.Errorf("a failed cd moved the shell to %v", fg)
	}
}

func TestLogs(t *testing.T) {
	e := newEnv(t)
	p := e.pane("default")
	e.ok("pane", "send-text", p, "say \"hi\"")
	e.ok("pane", "send-keys", p, "enter", "C-c", "esc")
	e.ok("pane", "run", p, "ls")
	wantIn := "text \"say \\\"hi\\\"\"\nkey enter\nkey C-c\nkey esc\ntext \"ls\"\nkey enter\n"
	if in := e.file("input.log"); in != wantIn {
		t.Errorf("input.log:\n%s\nwant:\n%s", in, wantIn)
	}
	calls := strings.Split(strings.TrimRight(e.file("calls.log"), "\n"), "\n")
	if len(calls) != 4 || calls[1] != `herdr pane send-text `+p+` "say \"hi\""` {
		t.Errorf("calls.log:\n%s", strings.Join(calls, "\n"))
	}
}

func TestLayout(t *testing.T) {
	e := newEnv(t)
	out := e.ok("workspace", "create", "--cwd", "/srv/x", "--label", "fmctl", "--no-focus")
	for path, want := range map[string]any{
		"result.type": "workspace_created", "result.workspace.workspace_id": "w1", "result.workspace.label": "fmctl",
		"result.workspace.focused": true, "result.tab.tab_id": "w1:t1", "result.tab.label": "1",
		"result.root_pane.pane_id": "w1:p1", "result.root_pane.cwd": "/srv/x",
	} {
		if got := jsonField(t, out, path); got != want {
			t.Errorf("workspace create %s = %v, want %v", path, got, want)
		}
	}
	if !strings.HasPrefix(out, `{"id":"cli:workspace:create","result":{"type":"workspace_created",`) {
		t.Errorf("result is not tagged first: %s", out)
	}
	out = e.ok("tab", "create", "--workspace", "w1", "--cwd", "/srv/y", "--label", "fm-a", "--no-focus")
	if jsonField(t, out, "result.tab.tab_id") != "w1:t2" || jsonField(t, out, "result.root_pane.pane_id") != "w1:p2" ||
		jsonField(t, out, "result.tab.focused") != false {
		t.Errorf("tab create: %s", out)
	}
	out = e.ok("tab", "rename", "w1:t1", "fm", "b")
	if jsonField(t, out, "result.tab.label") != "fm b" {
		t.Errorf("tab rename: %s", out)
	}
	e.ok("workspace", "create", "--cwd", "/srv/z")
	if ws := jsonField(t, e.ok("workspace", "list"), "result.workspaces").([]any); len(ws) != 2 ||
		ws[1].(map[string]any)["label"] != "z" || ws[1].(map[string]any)["focused"] != false {
		t.Errorf("workspace list: %v", ws)
	}
	// Closing the last pane of the last tab removes the workspace.
	e.ok("pane", "close", "w1:p1")
	e.ok("pane", "close", "w1:p2")
	if ws := jsonField(t, e.ok("workspace", "list"), "result.workspaces").([]any); len(ws) != 1 {
		t.Errorf("emptied workspace survived: %v", ws)
	}
	if r := e.run("pane", "close", "w1:p2"); r.code != 1 || !strings.Contains(r.stderr, "pane_not_found") {
		t.Errorf("closing a closed pane: %+v", r)
	}
}

func TestConcurrentCallsAreSerialised(t *testing.T) {
	e := newEnv(t)
	e.pane("default")
	var wg sync.WaitGroup
	const n = 20
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if r := e.run("tab", "create", "--workspace", "w1", "--label", fmt.Sprintf("fm-%d", i)); r.code != 0 {
				t.Errorf("tab create %d: %+v", i, r)
			}
		}(i)
	}
	wg.Wait()
	tabs := jsonField(t, e.ok("tab", "list"), "result.tabs").([]any)
	seen := map[string]bool{}
	for _, tb := range tabs {
		seen[tb.(map[string]any)["tab_id"].(string)] = true
	}
	if len(tabs) != n+1 || len(seen) != n+1 {
		t.Errorf("%d concurrent creates left %d tabs (%d distinct ids)", n, len(tabs), len(seen))
	}
}

func TestParseKey(t *testing.T) {
	for _, k := range []string{"enter", "Enter", "return", "esc", "escape", "Escape", "ctrl+c", "C-c", "c-c",
		"ctrl+u", "control+j", "alt+x", "shift+tab", "f1", "F12", "a", "A", "minus", "+", "space", "backspace"} {
		if _, ok := parseKey(k); !ok {
			t.Errorf("parseKey(%q) rejected a herdr key", k)
		}
	}
	for _, k := range []string{"C-u", "ctrl+", "ctrl+a+b", "enterr", "f256", "fx", "prefix+c", ""} {
		if _, ok := parseKey(k); ok {
			t.Errorf("parseKey(%q) accepted", k)
		}
	}
}
