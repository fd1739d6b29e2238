package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fmctl/state"
)

func TestParseHostsReadsEachHost(t *testing.T) {
	hosts, err := ParseHosts("hosts.toml", []byte(`
[hosts.gpu1]
ssh = "me@gpu1.example.com"
home = "/home/me/fm"

[hosts.box-2]
ssh = "box2"
home = "/srv/fm"
bin = "/opt/fm/bin"
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(hosts.Names(), ","); got != "box-2,gpu1" {
		t.Fatalf("names = %s", got)
	}
	gpu, _ := hosts.Lookup("gpu1", "hosts.toml")
	if gpu.SSH != "me@gpu1.example.com" || gpu.Home != "/home/me/fm" || gpu.RemoteBin() != DefaultRemoteBin || gpu.Name != "gpu1" {
		t.Fatalf("gpu1 = %+v", gpu)
	}
	if box, _ := hosts.Lookup("box-2", "hosts.toml"); box.RemoteBin() != "/opt/fm/bin" {
		t.Fatalf("box-2 bin = %q", box.RemoteBin())
	}
	if _, err := hosts.Lookup("gpu9", "hosts.toml"); !errors.Is(err, ErrNoSuchHost) || !strings.Contains(err.Error(), "box-2, gpu1") {
		t.Fatalf("Lookup(gpu9) = %v", err)
	}
}

func TestParseHostsRefusesWhatSSHWouldMisread(t *testing.T) {
	for name, body := range map[string]string{
		"option dest":    "[hosts.a]\nssh = \"-oProxyCommand=touch /tmp/x\"\nhome = \"/fm\"\n",
		"spaced dest":    "[hosts.a]\nssh = \"a b\"\nhome = \"/fm\"\n",
		"newline dest":   "[hosts.a]\nssh = \"a\\nb\"\nhome = \"/fm\"\n",
		"no dest":        "[hosts.a]\nhome = \"/fm\"\n",
		"no home":        "[hosts.a]\nssh = \"a\"\n",
		"relative home":  "[hosts.a]\nssh = \"a\"\nhome = \"fm\"\n",
		"control in bin": "[hosts.a]\nssh = \"a\"\nhome = \"/fm\"\nbin = \"/b\\u001b[2J\"\n",
		"dash bin":       "[hosts.a]\nssh = \"a\"\nhome = \"/fm\"\nbin = \"-x\"\n",
		"bad name":       "[hosts.\"a/b\"]\nssh = \"a\"\nhome = \"/fm\"\n",
		"dot name":       "[hosts.\".a\"]\nssh = \"a\"\nhome = \"/fm\"\n",
		"unknown key":    "[hosts.a]\nssh = \"a\"\nhome = \"/fm\"\nport = 22\n",
		"not toml":       "[hosts.a\n",
	} {
		if _, err := ParseHosts("hosts.toml", []byte(body)); !errors.Is(err, ErrBadHosts) {
			t.Errorf("%s: err = %v, want ErrBadHosts", name, err)
		}
	}
}

func TestLoadHostsMissingFileIsEmpty(t *testing.T) {
	dir := t.TempDir()
	h := Home{Root: dir, Config: filepath.Join(dir, "config")}
	hosts, err := h.LoadHosts()
	if err != nil || len(hosts) != 0 {
		t.Fatalf("LoadHosts = %v, %v", hosts, err)
	}
	if err := os.MkdirAll(h.Config, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.HostsPath(), []byte("[hosts.x]\nssh = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.LoadHosts(); !errors.Is(err, ErrBadHosts) {
		t.Fatalf("LoadHosts of a host without home = %v", err)
	}
}

func TestParseAddress(t *testing.T) {
	for arg, want := range map[string]Address{
		"t1":          {ID: "t1"},
		"gpu1/t1":     {Host: "gpu1", ID: "t1"},
		"a.b-c_d/x.y": {Host: "a.b-c_d", ID: "x.y"},
		// A bare id is the local checks' to judge, as before.
		"-rf": {ID: "-rf"},
	} {
		got, err := ParseAddress("fm-send", arg)
		if err != nil || got != want {
			t.Errorf("ParseAddress(%q) = %+v, %v; want %+v", arg, got, err, want)
		}
		if got.String() != arg {
			t.Errorf("%+v.String() = %q", got, got.String())
		}
	}
	for _, arg := range []string{"/t1", "gpu1/", "-oX/t1", ".h/t1", "h/-rf", "h/a/b", "h/sess:fm-t1", "h\x1b/t1", "h/../t1", "h h/t1"} {
		if _, err := ParseAddress("fm-send", arg); !errors.Is(err, state.ErrBadTaskID) {
			t.Errorf("ParseAddress(%q) = %v, want ErrBadTaskID", arg, err)
		}
	}
}
