package remotessh

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
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
	if !strings.HasPrefix(r.stdout, "sent h1/t1 ") || !strings.Contains(r.stdout, "submit=confirmed") {
		t.Fatalf("stdout = %q, want the host's sent line", r.stdout)
	}
	if got := a.submits(); len(got) != 1 || got[0] != `"hello from afar"` {
		t.Fatalf("the agent received %q, want the one message", got)
	}

	// A key, and a message read from standard input here (one paste there).
	r = f.run(30*time.Second, nil, "fm-send", "h1/t1", "--key", "Escape")
	wantCode(t, r, 0, "fm-send h1/t1 --key Escape")
	if !strings.HasPrefix(r.stdout, "key-delivered h1/t1 key=Escape") {
		t.Fatalf("stdout = %q", r.stdout)
	}
	r = f.runInput(60*time.Second, "line one\nline two\n", nil, "fm-send", "h1/t1", "-")
	wantCode(t, r, 0, "fm-send h1/t1 -")
	if events := readFile(a.events); !strings.Contains(events, `paste "line one\nline two"`) {
		t.Fatalf("the agent's events lack the pasted stdin:\n%s", events)
	}

	r = f.run(30*time.Second, nil, "fm-control", "status", "h1/t1", "--json")
	wantCode(t, r, 0, "fm-control status h1/t1")
	if !strings.Contains(r.stdout, `"state":"alive"`) {
		t.Fatalf("status stdout = %q, want state alive", r.stdout)
	}

	// --host h1 t1 is h1/t1: the host's agent takes it, and nothing of it
	// runs here (this machine has no t1).
	r = f.run(60*time.Second, nil, "fm-send", "--host", "h1", "t1", "by flag")
	wantCode(t, r, 0, "fm-send --host h1 t1")
	if got := a.submits(); got[len(got)-1] != `"by flag"` || strings.Count(strings.Join(got, "\n"), "by flag") != 1 {
		t.Fatalf("the agent received %q, want the message sent with --host last", got)
	}
	r = f.run(30*time.Second, nil, "fm-control", "status", "--host", "h1", "t1", "--json")
	wantCode(t, r, 0, "fm-control status --host h1 t1")
	if !strings.Contains(r.stdout, `"state":"alive"`) {
		t.Fatalf("status --host stdout = %q, want state alive", r.stdout)
	}

	r = f.run(30*time.Second, nil, "fm-control", "list", "--all-hosts")
	wantCode(t, r, 0, "fm-control list --all-hosts")
	t.Logf("list --all-hosts:\n%s", r.stdout)
	if !containsLine(r.stdout, "h1/t1: host=h1 ", "harness=claude", "state=alive") {
		t.Fatalf("list --all-hosts = %q, want h1's t1 alive", r.stdout)
	}
}

// containsLine reports whether list --all-hosts printed, into its pipe, a
// line that starts with prefix and holds every key=value token of facts.
func containsLine(out, prefix string, facts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		tokens := strings.Fields(line)
		if !slices.ContainsFunc(facts, func(f string) bool { return !slices.Contains(tokens, f) }) {
			return true
		}
	}
	return false
}

// hosts install copies this machine's binaries into a host's empty bin,
// after which the host answers from them.
func TestHostsInstallCopiesTheBinariesThere(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	h.startAgent("t1")
	fresh := h.Dir + "/fresh bin"
	appendFile(t, f.Home+"/config/hosts.toml", "[hosts.fresh]\nssh = \"h1\"\nhome = \""+h.Home+"\"\nbin = \""+fresh+"\"\n")
	wantCode(t, f.run(30*time.Second, nil, "fm-control", "status", "fresh/t1"), 1, "status before the install")

	r := f.run(60*time.Second, nil, "fm-control", "hosts", "install", "fresh")
	wantCode(t, r, 0, "hosts install fresh")
	if !strings.HasPrefix(r.stdout, "installed fresh bin="+strconv.Quote(fresh)+" ") {
		t.Fatalf("install said %s", r)
	}
	for _, bin := range []string{"fm-send", "fm-control", "fm-spawn", "fm-teardown"} {
		local, remote := readFile(binDir+"/"+bin), readFile(fresh+"/"+bin)
		if local == "" || local != remote {
			t.Fatalf("%s was not copied whole", bin)
		}
	}
	r = f.run(30*time.Second, nil, "fm-control", "status", "fresh/t1", "--json")
	wantCode(t, r, 0, "status after the install")
	// what was installed runs there whole, its --jq too
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, fresh+"/fm-control", "status", "t1", "--jq", ".id")
	cmd.Env = append(os.Environ(), "FM_HOME="+h.Home, "FM_TMUX_SOCKET="+h.sock, "FM_TMUX_SESSION=fmses", "TMUX=")
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "t1" {
		t.Fatalf("the installed fm-control status t1 --jq .id: %v, %q", err, out)
	}
}

// A host that stops answering is listed unreachable, its last answer's
// tasks marked stale: never dead.
func TestAnUnreachableHostListsItsLastTasksStale(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	h.startAgent("t1")
	wantCode(t, f.run(30*time.Second, nil, "fm-control", "list", "--all-hosts"), 0, "list with h1 up")
	h.KillSSHD()
	r := f.run(30*time.Second, nil, "fm-control", "list", "--all-hosts")
	wantCode(t, r, 0, "list with h1 down")
	if !containsLine(r.stdout, "h1/t1: host=h1 ", "harness=claude", "state=unreachable", "activity=stale") || !strings.Contains(r.stdout, " seen_at=") || strings.Contains(r.stdout, "dead") {
		t.Fatalf("list = %q, want t1 unreachable and stale", r.stdout)
	}
	r = f.run(30*time.Second, nil, "fm-control", "list", "--all-hosts", "--json")
	wantCode(t, r, 0, "list --json with h1 down")
	if !strings.Contains(r.stdout, `"host":"h1","reachable":false,"stale":true`) {
		t.Fatalf("list --json = %q", r.stdout)
	}
}

// Every fm-control verb reaches a task on a host: read, interrupt, rebind,
// recover, exit and wait, each answered by the host's own verb.
func TestEveryControlVerbOnARemoteTask(t *testing.T) {
	f := newFleet(t)
	h := f.addHost("h1")
	a := h.startAgent("t1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "h1/t1", "--lines", "3"}, "bypass permissions on"},
		{[]string{"interrupt", "h1/t1"}, "interrupt-delivered h1/t1 "},
		{[]string{"rebind", "h1/t1"}, "not-drifted h1/t1 "},
		{[]string{"recover", "h1/t1"}, "nothing-to-recover h1/t1"},
		{[]string{"exit", "h1/t1"}, "stopped h1/t1 "},
		{[]string{"wait", "h1/t1", "--for", "dead", "--timeout", "10"}, "reached h1/t1 "},
	} {
		r := f.run(60*time.Second, nil, "fm-control", c.args...)
		wantCode(t, r, 0, "fm-control "+strings.Join(c.args, " "))
		if !strings.Contains(r.stdout, c.want) {
			t.Fatalf("fm-control %s: stdout %q, want %q", strings.Join(c.args, " "), r.stdout, c.want)
		}
	}
	events := readFile(a.events)
	if !strings.Contains(events, "interrupt escape") || !strings.Contains(events, `submit "/exit"`) {
		t.Fatalf("the agent's events lack the interrupt or the exit:\n%s", events)
	}
}
