package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fmctl/state"
)

func envOf(m map[string]string) Env {
	return func(k string) string { return m[k] }
}

// homeOf is the home's variables as a binary reads them from env m.
func homeOf(m map[string]string) HomeVars {
	tun, _ := ReadTunables(envOf(m))
	return tun.Home
}

func newHome(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"state", "data", "config"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func wantRefusal(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want a refusal containing %q", parts)
	}
	var kind *state.KindError
	if !errors.As(err, &kind) {
		t.Errorf("error %v carries no kind", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
}

func TestResolveHomeUnset(t *testing.T) {
	_, err := ResolveHome("fm-control", homeOf(nil))
	wantRefusal(t, err, "FM_HOME is not set", "fm-control resolves a task only in an explicit firstmate home")
}

func TestResolveHomeNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(file, nil, 0o644)
	for _, root := range []string{file, filepath.Join(t.TempDir(), "absent")} {
		_, err := ResolveHome("fm-send", homeOf(map[string]string{"FM_HOME": root}))
		wantRefusal(t, err, "FM_HOME '"+root+"' is not a directory")
	}
}

// A file where FM_HOME points gets hints that work as printed: never a
// mkdir -p of the file's path; the home's directory when the file is in one.
func TestResolveHomeOnAFileHintsWhatWorks(t *testing.T) {
	hintsOf := func(err error) string {
		var h *state.HintedError
		if !errors.As(err, &h) {
			t.Fatalf("error %v carries no hints", err)
		}
		return strings.Join(h.Hints(), "\n")
	}
	home := newHome(t)
	inHome := filepath.Join(home, "fm.toml")
	os.WriteFile(inHome, nil, 0o644)
	_, err := ResolveHome("fm-send", homeOf(map[string]string{"FM_HOME": inHome}))
	wantRefusal(t, err, "FM_HOME '"+inHome+"' is not a directory but a file")
	if got, want := hintsOf(err), "export FM_HOME='"+home+"'"; !strings.Contains(got, want) || strings.Contains(got, "mkdir") {
		t.Errorf("hints %q, want %q and no mkdir", got, want)
	}
	loose := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(loose, nil, 0o644)
	_, err = ResolveHome("fm-send", homeOf(map[string]string{"FM_HOME": loose}))
	if got := hintsOf(err); strings.Contains(got, loose) || !strings.Contains(got, `mkdir -p "$HOME/fm-home" && export FM_HOME="$HOME/fm-home"`) {
		t.Errorf("hints %q: want a new home's mkdir, never one of the file's path", got)
	}
}

func TestResolveHomeMissingStateDir(t *testing.T) {
	root := t.TempDir()
	_, err := ResolveHome("fm-control", homeOf(map[string]string{"FM_HOME": root}))
	wantRefusal(t, err, "state dir '"+filepath.Join(root, "state")+"' is missing", "FM_HOME '"+root+"'")
	// a file where the state dir should be is no state dir either
	os.WriteFile(filepath.Join(root, "state"), nil, 0o644)
	_, err = ResolveHome("fm-control", homeOf(map[string]string{"FM_HOME": root}))
	wantRefusal(t, err, "state dir")
}

func TestResolveHomeDefaults(t *testing.T) {
	root := newHome(t)
	h, err := ResolveHome("fm-control", homeOf(map[string]string{"FM_HOME": root}))
	if err != nil {
		t.Fatal(err)
	}
	want := Home{Root: root, State: filepath.Join(root, "state"), Data: filepath.Join(root, "data"), Config: filepath.Join(root, "config")}
	if h != want {
		t.Errorf("home = %+v, want %+v", h, want)
	}
	if got := h.BriefPath("t1"); got != filepath.Join(root, "data", "t1", "brief.md") {
		t.Errorf("BriefPath = %s", got)
	}
}

func TestResolveHomeOverrides(t *testing.T) {
	root := t.TempDir() // no state dir of its own
	other := t.TempDir()
	env := map[string]string{
		"FM_HOME":            root,
		"FM_STATE_OVERRIDE":  other,
		"FM_DATA_OVERRIDE":   "/elsewhere/data",
		"FM_CONFIG_OVERRIDE": "/elsewhere/config",
	}
	h, err := ResolveHome("fm-control", homeOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if h.State != other || h.Data != "/elsewhere/data" || h.Config != "/elsewhere/config" || h.Root != root {
		t.Errorf("home = %+v", h)
	}
	env["FM_STATE_OVERRIDE"] = filepath.Join(other, "nope")
	_, err = ResolveHome("fm-control", homeOf(env))
	wantRefusal(t, err, "state dir '"+filepath.Join(other, "nope")+"' is missing")
}

func writePin(t *testing.T, body string) Home {
	t.Helper()
	root := newHome(t)
	h := Home{Root: root, State: filepath.Join(root, "state"), Config: filepath.Join(root, "config")}
	if body != "\x00absent" {
		if err := os.WriteFile(filepath.Join(h.Config, "secondmate-harness"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestSecondmatePin(t *testing.T) {
	cases := []struct {
		name string
		body string
		ok   bool
		want Pin
	}{
		{"absent file", "\x00absent", false, Pin{}},
		{"empty file", "", false, Pin{}},
		{"only comments and blanks", "# pin\n\n   \n# more\n", false, Pin{}},
		{"default", "default\n", false, Pin{}},
		{"default after comments", "# c\n\n  default  \nclaude\n", false, Pin{}},
		{"harness only", "claude\n", true, Pin{Harness: "claude"}},
		{"harness model", "codex gpt-5\n", true, Pin{Harness: "codex", Model: "gpt-5"}},
		{"harness model effort", "  grok  grok-4\thigh  \n", true, Pin{Harness: "grok", Model: "grok-4", Effort: "high"}},
		{"first real line wins", "# c\n\nopencode prov/m\nclaude x low\n", true, Pin{Harness: "opencode", Model: "prov/m"}},
		{"CRLF line", "claude opus max\r\n", true, Pin{Harness: "claude", Model: "opus", Effort: "max"}},
		{"no trailing newline", "pi", true, Pin{Harness: "pi"}},
		{"indented comment", "   # not a pin\nkimi\n", true, Pin{Harness: "kimi"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := writePin(t, c.body)
			p, ok, err := h.SecondmatePin()
			if err != nil {
				t.Fatal(err)
			}
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v (pin %+v)", ok, c.ok, p)
			}
			if ok {
				c.want.Path = filepath.Join(h.Config, "secondmate-harness")
			}
			if p != c.want {
				t.Errorf("pin = %+v, want %+v", p, c.want)
			}
		})
	}
}

func TestSecondmatePinUnreadableIsAnError(t *testing.T) {
	h := writePin(t, "\x00absent")
	if err := os.Mkdir(filepath.Join(h.Config, "secondmate-harness"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := h.SecondmatePin(); err == nil || ok {
		t.Errorf("a directory as the pin file: ok=%v err=%v, want an error", ok, err)
	}
}

func writeTOML(t *testing.T, body string) Home {
	t.Helper()
	root := newHome(t)
	h := Home{Root: root, Config: filepath.Join(root, "config")}
	if err := os.WriteFile(filepath.Join(h.Config, "fm.toml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestLoadFileMissingIsEmpty(t *testing.T) {
	root := newHome(t)
	f, err := Home{Config: filepath.Join(root, "config")}.LoadFile()
	if err != nil || !reflect.DeepEqual(f, File{}) {
		t.Errorf("missing fm.toml = %+v, %v; want empty", f, err)
	}
}

func TestLoadFileParsesHarnessOverrides(t *testing.T) {
	h := writeTOML(t, `
backend = "tmux"
[tmux]
session = "crew"
[zellij]
session = "z"
[harness.claude]
binary = "/opt/claude/bin/claude"
args = ["--verbose", "--debug"]
[harness.codex]
binary = "codex-nightly"
`)
	f, err := h.LoadFile()
	if err != nil {
		t.Fatal(err)
	}
	want := File{
		Tmux:    SessionConfig{Session: "crew"},
		Zellij:  SessionConfig{Session: "z"},
		Backend: "tmux",
		Harness: map[string]HarnessOverride{
			"claude": {Binary: "/opt/claude/bin/claude", Args: []string{"--verbose", "--debug"}},
			"codex":  {Binary: "codex-nightly"},
		},
	}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("file = %+v\nwant %+v", f, want)
	}
}

func TestLoadFileRefusesUnknownKeys(t *testing.T) {
	for body, key := range map[string]string{
		"[tmux]\nsesion = \"typo\"\n":       "tmux.sesion",
		"[harness.claude]\nbinry = \"x\"\n": "harness.claude.binry",
		"timeout = 3\n":                     "timeout",
		"[herdr]\nsession = \"a\"\nx = 1\n": "herdr.x",
	} {
		_, err := writeTOML(t, body).LoadFile()
		if err == nil || !strings.Contains(err.Error(), "unknown keys") || !strings.Contains(err.Error(), key) {
			t.Errorf("fm.toml %q: err = %v, want unknown key %s named", body, err, key)
		}
	}
}

func TestLoadFileRefusesBadTOML(t *testing.T) {
	for _, body := range []string{"[tmux\n", "backend = tmux\n", "[harness.claude]\nargs = \"not a list\"\n"} {
		h := writeTOML(t, body)
		_, err := h.LoadFile()
		if err == nil || !strings.Contains(err.Error(), filepath.Join(h.Config, "fm.toml")) {
			t.Errorf("fm.toml %q: err = %v, want a parse error naming the file", body, err)
		}
	}
}

func TestResolveHomeMakesARelativeHomeAbsolute(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "home", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	h, err := ResolveHome("fm-test", HomeVars{Root: "home"})
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(h.Root) || !filepath.IsAbs(h.State) || !filepath.IsAbs(h.BriefPath("t1")) {
		t.Fatalf("home %+v has a relative path; the brief pointer would not resolve from the worktree", h)
	}
	if _, err := os.Stat(h.State); err != nil {
		t.Fatalf("resolved state dir %s: %v", h.State, err)
	}
}

func TestSetUpMakesTheHomesDirsOnly(t *testing.T) {
	root := t.TempDir()
	other := filepath.Join(t.TempDir(), "data-elsewhere")
	env := homeOf(map[string]string{"FM_HOME": root, "FM_DATA_OVERRIDE": other})
	h, err := LocateHome("fm-spawn", env)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SetUp("fm-spawn", env); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"state", "config"} {
		if info, err := os.Lstat(filepath.Join(root, d)); err != nil || !info.IsDir() {
			t.Errorf("%s/ not made: %v", d, err)
		}
	}
	// an override's directory is the caller's to make, and data/ is not the data dir
	for _, p := range []string{other, filepath.Join(root, "data")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("SetUp made %s", p)
		}
	}
	if err := h.SetUp("fm-spawn", env); err != nil {
		t.Errorf("a second SetUp: %v", err)
	}
}

func TestSetUpRefusesAFileWhereADirGoes(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "config"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := homeOf(map[string]string{"FM_HOME": root})
	h, err := LocateHome("fm-spawn", env)
	if err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, h.SetUp("fm-spawn", env), filepath.Join(root, "config")+" is not a directory", "move it aside")
}

func TestMakeHomeDirsRefusesASymlinkAndWritesNothing(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(root, "data")); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, MakeHomeDirs(root), filepath.Join(root, "data")+" is a symlink", "nothing was written")
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the link's target gained %v", entries)
	}
	for _, d := range []string{"state", "config"} {
		if _, err := os.Lstat(filepath.Join(root, d)); err == nil {
			t.Errorf("%s/ was made by a refused setup", d)
		}
	}
}
