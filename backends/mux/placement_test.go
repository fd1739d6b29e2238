package mux

import (
	"testing"

	"fmctl/backends"
	"fmctl/config"
	"fmctl/harness"
)

func envOf(m map[string]string) backends.Env { return func(k string) string { return m[k] } }

func TestDetectPrefersTheInnermostMultiplexer(t *testing.T) {
	cases := []struct {
		env        map[string]string
		name, from string
	}{
		{map[string]string{}, "", ""},
		{map[string]string{"TMUX": "/tmp/s,1,0"}, harness.BackendTmux, "TMUX"},
		{map[string]string{"TMUX": "/tmp/s,1,0", "HERDR_ENV": "1"}, harness.BackendHerdr, "HERDR_ENV=1"},
		{map[string]string{"HERDR_ENV": "0"}, "", ""},
	}
	for _, c := range cases {
		name, from := Detect(envOf(c.env))
		if name != c.name || from != c.from {
			t.Errorf("Detect(%v) = %q, %q; want %q, %q", c.env, name, from, c.name, c.from)
		}
	}
}

func TestConfiguredContainerEnvBeforeFile(t *testing.T) {
	var f config.File
	f.Tmux.Session, f.Herdr.Session, f.Zellij.Session = "tf", "hf", "zf"
	env := envOf(nil)
	m := config.MuxVars{TmuxSession: "te"}
	for name, want := range map[string]string{harness.BackendTmux: "te", harness.BackendHerdr: "hf", harness.BackendZellij: "zf", harness.BackendOrca: ""} {
		if got := ConfiguredContainer(name, env, m, f); got != want {
			t.Errorf("ConfiguredContainer(%s) = %q, want %q", name, got, want)
		}
	}
}

func TestRecreateSpecKeepsTheRecordedPlace(t *testing.T) {
	tm := RecreateSpec(backends.Endpoint{Backend: harness.BackendTmux, Target: "fmses:fm-t1", TaskID: "t1", Worktree: "/w"})
	if tm != (backends.CreateSpec{TaskID: "t1", Label: "fm-t1", Dir: "/w", Container: "fmses"}) {
		t.Errorf("tmux spec = %+v", tm)
	}
	he := RecreateSpec(backends.Endpoint{Backend: harness.BackendHerdr, TaskID: "t1", Fields: map[string]string{"herdr_session": "s", "herdr_workspace_id": "w1"}})
	if he.Container != "s" || he.Workspace != "w1" {
		t.Errorf("herdr spec = %+v", he)
	}
}
