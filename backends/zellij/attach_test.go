package zellij

import (
	"testing"

	"fmctl/backends"
)

// The attach line names the adapter's own binary and session.
func TestZellijAttachCommandNamesTheSession(t *testing.T) {
	got, ok := New(nil, Options{}).AttachCommand(backends.Endpoint{Target: "firstmate:3"})
	if want := "zellij attach firstmate"; !ok || got != want {
		t.Errorf("AttachCommand(firstmate:3) = %q, %v; want %q", got, ok, want)
	}
}
