package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fmctl/remote"
	"fmctl/state"
)

// testServer runs fake binaries that log their argv, stdin and FM_HOME.
func testServer(t *testing.T) (Server, string) {
	dir := t.TempDir()
	log := filepath.Join(dir, "ran.log")
	for _, bin := range remote.Binaries {
		script := "#!/bin/sh\nprintf '%s|%s|%s\\n' \"$0 $*\" \"$(cat)\" \"$FM_HOME\" >> " + log + "\necho \"out $1\"\necho \"err $1\" >&2\nexit 3\n"
		if err := os.WriteFile(filepath.Join(dir, bin), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(dir, "home")
	return Server{Home: home, BinDir: dir, Env: []string{"FM_HOME=/elsewhere", "PATH=" + os.Getenv("PATH")}, Version: "v1",
		Log: state.Store{Dir: filepath.Join(home, "state")}.Requests()}, log
}

func serve(t *testing.T, s Server, reqs ...remote.Request) []remote.Response {
	t.Helper()
	var in bytes.Buffer
	for _, r := range reqs {
		line, _ := json.Marshal(r)
		in.Write(append(line, '\n'))
	}
	var out bytes.Buffer
	if err := os.MkdirAll(s.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(context.Background(), &in, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var hello remote.Hello
	if err := json.Unmarshal([]byte(lines[0]), &hello); err != nil || hello.Protocol != remote.Protocol || hello.Version != "v1" {
		t.Fatalf("first line %q is not the hello", lines[0])
	}
	var resps []remote.Response
	for _, l := range lines[1:] {
		var r remote.Response
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		resps = append(resps, r)
	}
	return resps
}

func TestServeRunsAMutationOnceAndReplaysItsOutcome(t *testing.T) {
	s, log := testServer(t)
	send := remote.Request{Protocol: remote.Protocol, ID: "req-send-1", Argv: []string{"fm-send", "t1", "-"}, Stdin: []byte("hello"), TimeoutMS: 10000}
	resps := serve(t, s, send, send)
	resps = append(resps, serve(t, s, send)...)
	if len(resps) != 3 {
		t.Fatalf("%d answers, want 3", len(resps))
	}
	for i, r := range resps {
		if r.ID != "req-send-1" || r.Exit != 3 || r.Stdout != "out t1\n" || r.Stderr != "err t1\n" || r.Replayed != (i > 0) {
			t.Fatalf("answer %d = %+v", i, r)
		}
	}
	ran := strings.Split(strings.TrimSpace(readFile(t, log)), "\n")
	if len(ran) != 1 || !strings.HasSuffix(ran[0], "fm-send t1 -|hello|"+s.Home) {
		t.Fatalf("ran %q, want fm-send once, with its stdin and the serve's home", ran)
	}
	// The same id on another message (FM_REQUEST_ID left set) is refused,
	// not answered with the first message's outcome.
	other := send
	other.Stdin = []byte("a new message")
	if r := serve(t, s, other)[0]; !r.Refused || r.Replayed || !strings.Contains(r.Stderr, "used before for another command") {
		t.Fatalf("a reused id: %+v", r)
	}
	if n := strings.Count(readFile(t, log), "\n"); n != 1 {
		t.Fatalf("%d runs, want still one", n)
	}
	// Only the output form may differ, never a word of the message.
	text := remote.Request{Protocol: remote.Protocol, ID: "req-text-1", Argv: []string{"fm-send", "t1", "--", "--json=a"}, TimeoutMS: 10000}
	asJSON, changed := text, text
	asJSON.Argv = []string{"fm-send", "--json=true", "t1", "--", "--json=a"}
	changed.Argv = []string{"fm-send", "t1", "--", "--json=b"}
	resps = serve(t, s, text, asJSON, changed)
	if !resps[1].Replayed || !resps[2].Refused {
		t.Fatalf("another form replayed %v; another message refused %v", resps[1].Replayed, resps[2].Refused)
	}
}

func TestServeRunsReadsEachTimeAndRefusesTheRest(t *testing.T) {
	s, log := testServer(t)
	status := remote.Request{Protocol: remote.Protocol, ID: "req-stat-1", Argv: []string{"fm-control", "status", "t1"}, TimeoutMS: 10000}
	refused := []remote.Request{
		{Protocol: 2, ID: "req-proto-1", Argv: []string{"fm-control", "status", "t1"}},
		{Protocol: remote.Protocol, ID: "../../x", Argv: []string{"fm-send", "t1", "hi"}},
		{Protocol: remote.Protocol, ID: "req-rm-0001", Argv: []string{"rm", "-rf", "/"}},
		{Protocol: remote.Protocol, ID: "req-rm-0002", Argv: []string{"../fm-send", "t1"}},
		{Protocol: remote.Protocol, ID: "req-serve-01", Argv: []string{"fm-control", "--json", "serve", "--home", "/"}},
	}
	resps := serve(t, s, append([]remote.Request{status, status}, refused...)...)
	for _, r := range resps[:2] {
		if r.Replayed || r.Exit != 3 {
			t.Fatalf("a read was not run each time: %+v", r)
		}
	}
	for i, r := range resps[2:] {
		if !r.Refused || r.Exit != 1 || !strings.Contains(r.Stderr, "nothing was run") {
			t.Errorf("request %+v: %+v, want a refusal", refused[i], r)
		}
	}
	if ran := strings.Count(readFile(t, log), "\n"); ran != 2 {
		t.Fatalf("%d verbs ran, want the two reads", ran)
	}
}

func readFile(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A file named on the caller's machine reaches the verb as a private file
// of the same content, after the verb, and only for the flags that name
// files.
func TestServePassesTheCallersFilesAsFilesThere(t *testing.T) {
	s, log := testServer(t)
	script := "#!/bin/sh\nfor a; do case \"$a\" in --note-file=*) cat \"${a#--note-file=}\" >> " + log + ";; esac; done\necho \"$*\" >> " + log + "\n"
	if err := os.WriteFile(filepath.Join(s.BinDir, "fm-control"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	relaunch := remote.Request{Protocol: remote.Protocol, ID: "req-note-01", Argv: []string{"fm-control", "relaunch", "--json=true", "t1"},
		Files: map[string][]byte{"note-file": []byte("tests pass\n")}, TimeoutMS: 10000}
	odd := relaunch
	odd.ID, odd.Files = "req-note-02", map[string][]byte{"home": []byte("/")}
	resps := serve(t, s, relaunch, odd)
	if resps[0].Exit != 0 || !resps[1].Refused {
		t.Fatalf("answers %+v", resps)
	}
	ran := readFile(t, log)
	if !strings.HasPrefix(ran, "tests pass\nrelaunch --note-file=") || !strings.Contains(ran, " --json=true t1\n") || strings.Count(ran, "relaunch") != 1 {
		t.Fatalf("ran %q, want the note's content through --note-file after the verb, once", ran)
	}
}
