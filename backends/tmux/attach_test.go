package tmux

import (
	"testing"

	"fmctl/backends"
)

// The attach line names the adapter's own server and binary: a person's
// plain `tmux attach` would reach the default server, not fmctl's -L one.
func TestAttachCommandNamesTheAdaptersServer(t *testing.T) {
	for _, c := range []struct {
		be     backends.Attacher
		target string
		want   string
	}{
		{New(nil, Options{}), "fmses:fm-t1", "tmux attach -t fmses"},
		{New(nil, Options{Socket: "fmsock"}), "fmses:fm-t1", "tmux -L fmsock attach -t fmses"},
		{New(nil, Options{SocketPath: "/tmp/my sock", Binary: "/opt/tmux"}), "s:w", "/opt/tmux -S '/tmp/my sock' attach -t s"},
	} {
		got, ok := c.be.AttachCommand(backends.Endpoint{Target: c.target})
		if !ok || got != c.want {
			t.Errorf("AttachCommand(%s) = %q, %v; want %q", c.target, got, ok, c.want)
		}
	}
	if _, ok := New(nil, Options{}).AttachCommand(backends.Endpoint{Target: "no-colon"}); ok {
		t.Error("a target that is not session:window has no attach line")
	}
}
