package state

import (
	"testing"

	"fmctl/harness"
)

func TestBackendDefaultsOnlyWhenAbsent(t *testing.T) {
	cases := map[string]string{
		"window=s:fm-t1\n":                harness.BackendTmux,
		"window=s:fm-t1\nbackend=\n":      harness.BackendTmux,
		"window=s:fm-t1\nbackend=herdr\n": harness.BackendHerdr,
		"backend=zellij\nbackend=orca\n":  harness.BackendOrca, // the last line holds, as Get reads
		"backend=unknown-mux\nwindow=x\n": "unknown-mux",       // refusing an unknown name is the resolver's job
	}
	for text, want := range cases {
		r, err := ParseRecord([]byte(text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got := r.Backend(); got != want {
			t.Errorf("Backend() of %q = %q, want %q", text, got, want)
		}
	}
}

func TestAccessorsReadTheirKeys(t *testing.T) {
	var r Record
	for _, k := range MetaKeys() {
		r.Set(k, k+"-value")
	}
	got := map[string]string{
		KeyWindow: r.Window(), KeyWorktree: r.Worktree(), KeyHarness: r.Harness(), KeyKind: r.Kind(),
		KeyBackend: r.Backend(), KeyModel: r.Model(), KeyEffort: r.Effort(), KeySpawnGen: r.SpawnGen(),
		KeyRemoteHost: r.RemoteHost(), KeyControlRelaunchTx: r.ControlRelaunchTx(),
		KeyGrants: r.Grants(), KeySpawnedBy: r.SpawnedBy(), KeyTmuxPanePID: r.TmuxPanePID(), KeyPermissions: r.Permissions(),
	}
	for k, v := range got {
		if v != k+"-value" {
			t.Errorf("accessor for %s read %q", k, v)
		}
	}
}

func TestPanePIDOfReadsEitherKey(t *testing.T) {
	for text, want := range map[string]string{
		"window=s:fm-t1\ntmux_pane_pid=300\n":               "300", // tmux, and a record from before pane_pid
		"window=d:w1:p1\nbackend=herdr\npane_pid=400\n":     "400",
		"window=s:fm-t1\ntmux_pane_pid=300\npane_pid=500\n": "500", // the backend-neutral key wins
		"window=z:1\nbackend=zellij\n":                      "",    // nothing recorded
		"window=d:w1:p1\npane_pid=400\npane_pid=401\n":      "401", // the last line holds, as Get reads
	} {
		if got := PanePIDOf([]byte(text)); got != want {
			t.Errorf("PanePIDOf(%q) = %q, want %q", text, got, want)
		}
	}
}
