package remotessh

import (
	"strings"
	"testing"
	"time"
)

// A message to h1/t1 reaches the agent on h1 once, and status and list
// read it there.
func TestSendStatusAndListOnARemoteTask(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	a := h.startAgent("t1")

	r := f.run(60*time.Second, nil, "fm-send", "h1/t1", "hello from afar")
	wantCode(t, r, 0, "fm-send h1/t1")
	if !strings.HasPrefix(r.stdout, "sent t1 ") || !strings.Contains(r.stdout, "submit=confirmed") {
		t.Fatalf("stdout = %q, want the host's sent line", r.stdout)
	}
	if got := a.submits(); len(got) != 1 || got[0] != `"hello from afar"` {
		t.Fatalf("the agent received %q, want the one message", got)
	}

	r = f.run(30*time.Second, nil, "fm-control", "status", "h1/t1", "--json")
	wantCode(t, r, 0, "fm-control status h1/t1")
	if !strings.Contains(r.stdout, `"state":"alive"`) {
		t.Fatalf("status stdout = %q, want state alive", r.stdout)
	}

	r = f.run(30*time.Second, nil, "fm-control", "list", "--all-hosts")
	wantCode(t, r, 0, "fm-control list --all-hosts")
	t.Logf("list --all-hosts:\n%s", r.stdout)
	if !containsRow(r.stdout, "h1", "t1", "claude", "alive") {
		t.Fatalf("list --all-hosts = %q, want h1's t1 alive", r.stdout)
	}
}

func containsRow(out string, words ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(words) && strings.Join(f[:len(words)], " ") == strings.Join(words, " ") {
			return true
		}
	}
	return false
}
