package zellij

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/harness"
	"fmctl/state"
)

// buildZellijFake compiles tests/fakes/zellij into dir/zellij.
func buildZellijFake(t *testing.T, dir string) string {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	bin := filepath.Join(dir, "zellij")
	build := exec.Command("go", "build", "-o", bin, "./tests/fakes/zellij/cmd/zellij")
	build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fake zellij: %v\n%s", err, out)
	}
	return bin
}

// zellijRig is one adapter wired to a fresh fake zellij state directory.
type zellijRig struct {
	t     *testing.T
	bin   string
	state string
	calls *backends.CountingRunner
	z     *Adapter
}

func newZellijRig(t *testing.T, bin string) *zellijRig {
	state := t.TempDir()
	t.Setenv("FAKE_ZELLIJ_DIR", state)
	calls := &backends.CountingRunner{Inner: &backends.ExecRunner{}}
	z := New(calls, Options{Binary: bin})
	z.sleep = func(context.Context, time.Duration) error { return nil }
	return &zellijRig{t: t, bin: bin, state: state, calls: calls, z: z}
}

// fake runs the fake directly, outside the counted runner.
func (r *zellijRig) fake(args ...string) string {
	r.t.Helper()
	out, err := exec.Command(r.bin, args...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("fake zellij %q: %v\n%s", args, err, out)
	}
	return string(out)
}

func (r *zellijRig) file(name string) string {
	data, _ := os.ReadFile(filepath.Join(r.state, name))
	return string(data)
}

// argv lists the counted zellij calls as "action-or-subcommand" words.
func (r *zellijRig) argv() []string {
	var out []string
	for _, c := range r.calls.Log() {
		args := c.Args
		if len(args) > 3 && args[0] == "--session" && args[2] == "action" {
			args = args[3:]
		}
		out = append(out, args[0])
	}
	return out
}

func (r *zellijRig) create(label string) ([]backends.Field, backends.Endpoint) {
	r.t.Helper()
	fields, err := r.z.Create(context.Background(), backends.CreateSpec{TaskID: strings.TrimPrefix(label, "fm-"), Label: label, Dir: r.t.TempDir()})
	if err != nil {
		r.t.Fatalf("Create %s: %v", label, err)
	}
	ep := backends.Endpoint{Backend: "zellij", Fields: map[string]string{}}
	for _, f := range fields {
		ep.Fields[f.Key] = f.Value
	}
	ep.Target = ep.Fields["window"]
	r.calls.Reset()
	return fields, ep
}

func TestZellij(t *testing.T) {
	bin := buildZellijFake(t, t.TempDir())
	ctx := context.Background()

	t.Run("create starts the session, opens a tab and gives focus back", func(t *testing.T) {
		r := newZellijRig(t, bin)
		dir := t.TempDir()
		fields, err := r.z.Create(ctx, backends.CreateSpec{TaskID: "t1", Label: "fm-t1", Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		want := []backends.Field{{Key: "window", Value: "firstmate:1"}, {Key: "zellij_session", Value: "firstmate"}, {Key: "zellij_tab_id", Value: "1"}, {Key: "zellij_pane_id", Value: "1"}}
		if !reflect.DeepEqual(fields, want) {
			t.Fatalf("fields %v, want %v", fields, want)
		}
		if got := r.argv(); !reflect.DeepEqual(got, []string{"list-tabs", "attach", "list-tabs", "new-tab", "list-panes", "go-to-tab-by-id"}) {
			t.Fatalf("calls %v", got)
		}
		if !strings.Contains(r.file("calls.log"), "--session firstmate action new-tab --cwd="+dir+" --name=fm-t1\n") {
			t.Fatalf("calls.log:\n%s", r.file("calls.log"))
		}
		tabs := r.fake("--session", "firstmate", "action", "list-tabs", "--json")
		if !strings.Contains(tabs, "\"name\": \"Tab #1\",\n    \"active\": true") {
			t.Fatalf("the first tab should be focused again:\n%s", tabs)
		}
		ep := backends.Endpoint{Target: "firstmate:1", Fields: map[string]string{"zellij_session": "firstmate", "zellij_tab_id": "1", "zellij_pane_id": "1"}}
		if got, err := r.z.CurrentPath(ctx, ep); err != nil || got != dir {
			t.Fatalf("CurrentPath = %q, %v; want %s", got, err, dir)
		}

		r.calls.Reset()
		if _, err := r.z.Create(ctx, backends.CreateSpec{TaskID: "t2", Label: "fm-t2", Dir: dir, Container: "firstmate"}); err != nil {
			t.Fatal(err)
		}
		if got := r.argv(); !reflect.DeepEqual(got, []string{"list-tabs", "new-tab", "list-panes", "go-to-tab-by-id"}) {
			t.Fatalf("create in a running session: calls %v", got)
		}
		r.calls.Reset()
		if _, err := r.z.Create(ctx, backends.CreateSpec{TaskID: "t1", Label: "fm-t1", Dir: dir}); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("duplicate label: %v", err)
		}
		if got := r.argv(); !reflect.DeepEqual(got, []string{"list-tabs"}) {
			t.Fatalf("a refused create may only look: calls %v", got)
		}
	})

	t.Run("send text", func(t *testing.T) {
		r := newZellijRig(t, bin)
		_, ep := r.create("fm-t1")
		long := strings.Repeat("0123456789abcdef", 256) // 4 KiB
		for _, text := range []string{"hello", "--help", "line one\nline two", long} {
			if err := r.z.SendText(ctx, ep, text); err != nil {
				t.Fatal(err)
			}
		}
		if got := r.argv(); len(got) != 8 || got[0] != "list-panes" || got[1] != "paste" {
			t.Fatalf("want list-panes+paste per text, got %v", got)
		}
		log := r.file("input.log")
		for _, want := range []string{`text "hello"`, `text "--help"`, `text "line one\nline two"`, `text "` + long + `"`} {
			if !strings.Contains(log, want+"\n") {
				t.Errorf("input.log lacks %s", want)
			}
		}
		if n := strings.Count(log, "\n"); n != 4 {
			t.Errorf("each text must be one delivery, input.log has %d lines:\n%s", n, log)
		}
		screen, err := r.z.Capture(ctx, ep)
		if err != nil {
			t.Fatal(err)
		}
		if last := screen.Lines[len(screen.Lines)-1]; !strings.HasSuffix(last, "line two"+long) {
			t.Fatalf("composer should hold every text unsubmitted, last line %q", last)
		}
	})

	t.Run("send keys", func(t *testing.T) {
		r := newZellijRig(t, bin)
		_, ep := r.create("fm-t1")
		for _, k := range harness.NamedKeys {
			if err := r.z.SendKey(ctx, ep, k); err != nil {
				t.Fatalf("%s: %v", k, err)
			}
		}
		if got, want := r.file("input.log"), "key Esc\nkey Enter\nkey Ctrl c\nkey Ctrl u\n"; got != want {
			t.Fatalf("input.log %q, want %q", got, want)
		}
		if n := r.calls.Calls(bin); n != 2*len(harness.NamedKeys) {
			t.Fatalf("%d calls for %d keys, want 2 each", n, len(harness.NamedKeys))
		}
		r.calls.Reset()
		if err := r.z.SendKey(ctx, ep, harness.Key("F1")); err == nil || r.calls.Calls(bin) != 0 {
			t.Fatalf("unknown key: %v after %d calls", err, r.calls.Calls(bin))
		}
	})

	t.Run("launch, capture and agent state", func(t *testing.T) {
		r := newZellijRig(t, bin)
		_, ep := r.create("fm-t1")
		obs := r.z.AgentState(ctx, ep)
		if obs.State != backends.StateUnverified || !strings.Contains(obs.Detail, "unverified") || obs.CurrentPath == "" {
			t.Fatalf("shell pane: %+v", obs)
		}
		if err := r.z.SendText(ctx, ep, "env -u CLAUDECODE grok --model opus"); err != nil {
			t.Fatal(err)
		}
		if err := r.z.SendKey(ctx, ep, harness.KeyEnter); err != nil {
			t.Fatal(err)
		}
		// An agent in the pane changes nothing: zellij cannot prove it.
		if obs := r.z.AgentState(ctx, ep); obs.State != backends.StateUnverified || !strings.Contains(obs.Detail, `"grok"`) {
			t.Fatalf("agent pane: %+v", obs)
		}
		if err := r.z.SendText(ctx, ep, "draft"); err != nil {
			t.Fatal(err)
		}
		r.calls.Reset()
		screen, err := r.z.Capture(ctx, ep)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"$ env -u CLAUDECODE grok --model opus", "> draft"}
		if !reflect.DeepEqual(screen.Lines, want) || screen.Cursor {
			t.Fatalf("screen %+v, want lines %q and no cursor", screen, want)
		}
		if n := r.calls.Calls(bin); n != 1 {
			t.Fatalf("capture took %d calls, want 1", n)
		}
	})

	t.Run("current path follows cd", func(t *testing.T) {
		r := newZellijRig(t, bin)
		_, ep := r.create("fm-t1")
		dest := t.TempDir()
		if err := r.z.SendText(ctx, ep, "cd "+dest); err != nil {
			t.Fatal(err)
		}
		if err := r.z.SendKey(ctx, ep, harness.KeyEnter); err != nil {
			t.Fatal(err)
		}
		if got, err := r.z.CurrentPath(ctx, ep); err != nil || got != dest {
			t.Fatalf("CurrentPath = %q, %v; want %s", got, err, dest)
		}
	})

	t.Run("missing endpoints", func(t *testing.T) {
		r := newZellijRig(t, bin)
		_, ep := r.create("fm-t1")
		gone := backends.Endpoint{Target: "firstmate:7"}
		if obs := r.z.AgentState(ctx, gone); obs.State != backends.StateMissing {
			t.Fatalf("absent pane: %+v", obs)
		}
		r.calls.Reset()
		if err := r.z.SendText(ctx, gone, "hello"); err == nil {
			t.Fatal("SendText to an absent pane succeeded")
		}
		if err := r.z.SendKey(ctx, gone, harness.KeyEnter); err == nil {
			t.Fatal("SendKey to an absent pane succeeded")
		}
		if _, err := r.z.Capture(ctx, gone); err == nil {
			t.Fatal("Capture of an absent pane succeeded")
		}
		if got := r.argv(); !reflect.DeepEqual(got, []string{"list-panes", "list-panes", "dump-screen", "list-panes"}) {
			t.Fatalf("nothing may be sent to an absent pane: calls %v", got)
		}
		// One session running: zellij exits 1 for another name.
		other := backends.Endpoint{Target: "elsewhere:1"}
		if obs := r.z.AgentState(ctx, other); obs.State != backends.StateMissing || !strings.Contains(obs.Detail, "not running") {
			t.Fatalf("absent session (one running): %+v", obs)
		}
		// Several running: zellij prints the session list and exits 0.
		r.fake("attach", "-b", "second")
		if obs := r.z.AgentState(ctx, other); obs.State != backends.StateMissing || !strings.Contains(obs.Detail, "not running") {
			t.Fatalf("absent session (several running): %+v", obs)
		}
		if _, err := r.z.Capture(ctx, other); err == nil {
			t.Fatal("Capture took zellij's session list for a screen")
		}
		if err := r.z.SendText(ctx, other, "hello"); err == nil {
			t.Fatal("SendText to an absent session succeeded")
		}
		if strings.Contains(r.file("input.log"), "hello") {
			t.Fatal("text reached a pane")
		}
		// A CLI that cannot answer is unreadable, not missing.
		t.Setenv("FAKE_ZELLIJ_DIR", "")
		if obs := r.z.AgentState(ctx, ep); obs.State != backends.StateUnreadable {
			t.Fatalf("broken CLI: %+v", obs)
		}
	})

	t.Run("kill removes the tab", func(t *testing.T) {
		r := newZellijRig(t, bin)
		_, ep := r.create("fm-t1")
		if err := r.z.Kill(ctx, ep); err != nil {
			t.Fatal(err)
		}
		if got := r.argv(); !reflect.DeepEqual(got, []string{"list-panes", "close-tab-by-id"}) {
			t.Fatalf("calls %v", got)
		}
		if tabs := r.fake("--session", "firstmate", "action", "list-tabs", "--json"); strings.Contains(tabs, "fm-t1") {
			t.Fatalf("tab survived:\n%s", tabs)
		}
		if obs := r.z.AgentState(ctx, ep); obs.State != backends.StateMissing {
			t.Fatalf("after kill: %+v", obs)
		}
		if err := r.z.Kill(ctx, ep); err != nil {
			t.Fatalf("killing a gone endpoint: %v", err)
		}
	})
}

func TestZellijValidateRecord(t *testing.T) {
	z := New(nil, Options{})
	good := map[string]string{"zellij_session": "firstmate", "zellij_tab_id": "3", "zellij_pane_id": "5"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for key, val := range good {
			m[key] = val
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		target string
		fields map[string]string
		ok     bool
	}{
		{"firstmate:5", good, true},
		{"firstmate:0", with("zellij_pane_id", "0"), true},
		{"firstmate:5", with("zellij_session", ""), false},
		{"firstmate:5", with("zellij_tab_id", ""), false},
		{"firstmate:5", with("zellij_pane_id", ""), false},
		{"firstmate:5", with("zellij_tab_id", "t3"), false},
		{"firstmate:5", with("zellij_pane_id", "6"), false},
		{"other:5", good, false},
		{"firstmate:terminal_5", good, false},
		{"firstmate:5:5", good, false},
		{"first mate:5", with("zellij_session", "first mate"), false},
		{"firstmate", good, false},
		{":5", good, false},
	}
	for _, c := range cases {
		err := z.ValidateRecord(backends.Endpoint{Backend: "zellij", Target: c.target, Fields: c.fields})
		if (err == nil) != c.ok {
			t.Errorf("ValidateRecord(%s, %v) = %v, want ok=%v", c.target, c.fields, err, c.ok)
		}
	}
}

func TestZellijKeyNames(t *testing.T) {
	for _, k := range harness.NamedKeys {
		if zellijKeyNames[k] == "" {
			t.Errorf("no zellij spelling for %s", k)
		}
	}
}

// A zellij session started anew numbers its panes from the start again: a
// record whose first process is gone reads missing, never as the pane that
// took its id, and Kill leaves that other pane alone.
func TestZellijRecordOfARestartedSessionIsMissing(t *testing.T) {
	bin := buildZellijFake(t, t.TempDir())
	ctx := context.Background()
	r := newZellijRig(t, bin)
	root := t.TempDir()
	r.z.o.ProcRoot = root
	_, ep := r.create("fm-t1")
	fakeProc(t, root, 200, 1, "ZELLIJ_SESSION_NAME=firstmate", "ZELLIJ_PANE_ID="+ep.Field("zellij_pane_id"))
	ep.Fields[state.KeyPanePID] = "200"
	if obs := r.z.AgentState(ctx, ep); obs.State != backends.StateUnverified {
		t.Fatalf("the recorded pane, its first process alive: %s (%s), want unverified", obs.State, obs.Detail)
	}

	// the session restarts: the pane id is there again, its process is not
	if err := os.RemoveAll(filepath.Join(root, "200")); err != nil {
		t.Fatal(err)
	}
	fakeProc(t, root, 300, 1, "ZELLIJ_SESSION_NAME=firstmate", "ZELLIJ_PANE_ID="+ep.Field("zellij_pane_id"))
	obs := r.z.AgentState(ctx, ep)
	if obs.State != backends.StateMissing || !strings.Contains(obs.Detail, "started anew") {
		t.Fatalf("a pane id now another's: %s (%s), want missing", obs.State, obs.Detail)
	}
	if err := r.z.SendText(ctx, ep, "hello"); err == nil {
		t.Fatal("SendText typed into the pane that took the recorded id")
	}
	if _, err := r.z.Capture(ctx, ep); err == nil {
		t.Fatal("Capture read the pane that took the recorded id as the task's")
	}
	r.calls.Reset()
	if err := r.z.Kill(ctx, ep); err != nil {
		t.Fatal(err)
	}
	for _, c := range r.argv() {
		if strings.HasPrefix(c, "close") {
			t.Fatalf("Kill closed the pane that took the recorded id: calls %v", r.argv())
		}
	}
	// a pid reused by a process of another pane is not the recorded one either
	fakeProc(t, root, 200, 1, "ZELLIJ_SESSION_NAME=firstmate", "ZELLIJ_PANE_ID=99")
	if obs := r.z.AgentState(ctx, ep); obs.State != backends.StateMissing {
		t.Fatalf("the recorded pid now another pane's process: %s, want missing", obs.State)
	}
}
