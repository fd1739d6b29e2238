package backends

import "testing"

// The attach line names the adapter's own server and binary: a person's
// plain `tmux attach` would reach the default server, not fmctl's -L one.
func TestAttachCommandNamesTheAdaptersServer(t *testing.T) {
	for _, c := range []struct {
		be     Attacher
		target string
		want   string
	}{
		{NewTmux(nil, TmuxOptions{}), "fmses:fm-t1", "tmux attach -t fmses"},
		{NewTmux(nil, TmuxOptions{Socket: "fmsock"}), "fmses:fm-t1", "tmux -L fmsock attach -t fmses"},
		{NewTmux(nil, TmuxOptions{SocketPath: "/tmp/my sock", Binary: "/opt/tmux"}), "s:w", "/opt/tmux -S '/tmp/my sock' attach -t s"},
		{NewZellij(nil, ZellijOptions{}), "firstmate:3", "zellij attach firstmate"},
	} {
		got, ok := c.be.AttachCommand(Endpoint{Target: c.target})
		if !ok || got != c.want {
			t.Errorf("AttachCommand(%s) = %q, %v; want %q", c.target, got, ok, c.want)
		}
	}
	if _, ok := NewTmux(nil, TmuxOptions{}).AttachCommand(Endpoint{Target: "no-colon"}); ok {
		t.Error("a target that is not session:window has no attach line")
	}
}
