package remote

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fmctl/config"
)

var testHost = config.Host{Name: "h1", SSH: "me@h1.example", Home: "/srv/fm", Bin: "/opt/fm bin"}

func TestCommandArgsKeepSSHsSafetyAndQuoteEveryWord(t *testing.T) {
	s := SSH{ConfigFile: "/tmp/cfg", ConnectTimeout: 1500 * time.Millisecond, ControlDir: "/run/x", Persist: time.Minute}
	args := s.CommandArgs(testHost, "/opt/fm bin/fm-control", "serve", "--home", "it's")
	joined := strings.Join(args, " ")
	for _, want := range []string{"-F /tmp/cfg", "BatchMode=yes", "ConnectTimeout=2", "ControlMaster=auto", "ControlPersist=60", "-T"} {
		if !strings.Contains(joined, want) {
			t.Errorf("args lack %q: %q", want, args)
		}
	}
	if strings.Contains(strings.ToLower(joined), "stricthostkeychecking") || strings.Contains(joined, "UserKnownHostsFile") {
		t.Errorf("args touch host-key checking: %q", args)
	}
	// The destination follows "--", so no destination is read as an option,
	// and the remote command is one string of quoted words.
	i := slices.Index(args, "--")
	if i < 0 || args[i+1] != testHost.SSH || len(args) != i+3 {
		t.Fatalf("args = %q, want -- <dest> <command>", args)
	}
	if got, want := args[i+2], `'/opt/fm bin/fm-control' 'serve' '--home' 'it'\''s'`; got != want {
		t.Fatalf("remote command = %s, want %s", got, want)
	}
	if p := s.ControlPath(testHost); len(p) > 40 || !strings.HasPrefix(p, "/run/x/h-") {
		t.Fatalf("control path %q is not short and in the control dir", p)
	}
}

func TestPrepareControlDirIsPrivateAndNoSymlink(t *testing.T) {
	dir := t.TempDir()
	s := SSH{ControlDir: filepath.Join(dir, "ctl")}
	if err := os.Mkdir(s.ControlDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.PrepareControlDir(); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(s.ControlDir); info.Mode().Perm() != 0o700 {
		t.Fatalf("control dir mode %v, want 0700", info.Mode().Perm())
	}
	link := SSH{ControlDir: filepath.Join(dir, "link")}
	if err := os.Symlink(s.ControlDir, link.ControlDir); err != nil {
		t.Fatal(err)
	}
	if err := link.PrepareControlDir(); err == nil {
		t.Fatal("a symlinked control dir was accepted")
	}
}

func TestMutatesCountsOnlyKnownReadsAsReads(t *testing.T) {
	for argv, want := range map[string]bool{
		"fm-control status t1":        false,
		"fm-control --json=true list": false,
		"fm-control wait t1":          false,
		"fm-control read t1":          false,
		"fm-control interrupt t1":     true,
		"fm-control exit t1":          true,
		"fm-control relaunch t1":      true,
		"fm-control future-verb t1":   true,
		"fm-send t1 -- status":        true,
		"fm-spawn t1":                 true,
		"fm-control":                  true,
	} {
		if got := Mutates(strings.Fields(argv)); got != want {
			t.Errorf("Mutates(%s) = %v, want %v", argv, got, want)
		}
	}
}

// fakeSSH writes an ssh stand-in: -O check runs check; a command runs
// the remote command string locally with sh, as sshd's shell would.
func fakeSSH(t *testing.T, check string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ssh")
	script := `#!/bin/sh
while [ $# -gt 0 ]; do
	case "$1" in
	-O) ` + check + `;;
	--) shift; break;;
	esac
	shift
done
shift
exec sh -c "$1"
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func testSSH(t *testing.T, check string) SSH {
	dir, err := os.MkdirTemp("/tmp", "fmrt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return SSH{Bin: fakeSSH(t, check), ControlDir: filepath.Join(dir, "c"), ConnectTimeout: time.Second, Persist: time.Minute, ProbeTimeout: 300 * time.Millisecond, LocalVersion: "v-local"}
}

// leaveSocket puts a socket no one answers at path, as a killed master
// leaves one.
func leaveSocket(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
}

// wedgedSocket listens at path and accepts, never answering, as a wedged
// master or keeper would.
func wedgedSocket(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
}

// The master is probed with ssh -O check, bounded: one that refuses (dead)
// or never answers (wedged) has its socket removed within the bound; one
// that answers is kept.
func TestAStaleMasterIsReplacedWithinTheProbe(t *testing.T) {
	for name, master := range map[string]struct {
		setup func(t *testing.T, path string)
		check string
	}{
		"dead":   {leaveSocket, "exit 255"},
		"wedged": {wedgedSocket, "exec sleep 30"},
	} {
		s := testSSH(t, master.check)
		master.setup(t, s.ControlPath(testHost))
		start := time.Now()
		removed, err := s.ReplaceStaleMaster(context.Background(), testHost)
		if err != nil || !removed {
			t.Fatalf("%s master: ReplaceStaleMaster = %v, %v; want the socket removed", name, removed, err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("%s master: the probe took %v, past its 300ms bound", name, took)
		}
		if _, err := os.Lstat(s.ControlPath(testHost)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s master: the socket is still there: %v", name, err)
		}
	}
	live := testSSH(t, "exit 0")
	wedgedSocket(t, live.ControlPath(testHost))
	if removed, err := live.ReplaceStaleMaster(context.Background(), testHost); err != nil || removed {
		t.Fatalf("a master that answers was replaced: %v, %v", removed, err)
	}
	// A check its caller cut short proves nothing: the socket stays.
	cut := testSSH(t, "exec sleep 30")
	wedgedSocket(t, cut.ControlPath(testHost))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if removed, err := cut.ReplaceStaleMaster(ctx, testHost); removed || !errors.Is(err, context.Canceled) {
		t.Fatalf("a check cut short: removed %v, %v; want the socket kept and the cancel said", removed, err)
	}
}

// serveHost is a host whose "fm-control" is script, run by the fake ssh.
func serveHost(t *testing.T, script string) config.Host {
	dir := t.TempDir()
	if script != "" {
		if err := os.WriteFile(filepath.Join(dir, "fm-control"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return config.Host{Name: "h1", SSH: "h1", Home: dir, Bin: dir}
}

const echoServe = `echo 'motd from an rc file'
echo '{"serve":"fmctl","protocol":1,"version":"v-remote","arch":"linux/amd64"}'
while read -r line; do
	id=$(printf '%s' "$line" | sed 's/.*"request":"\([^"]*\)".*/\1/')
	printf '{"request":"%s","exit":0,"stdout":"ok\\n","stderr":""}\n' "$id"
done
`

func TestSessionSkipsAPreambleAndAnswersRequests(t *testing.T) {
	s := testSSH(t, "exit 0")
	sess, err := s.Open(context.Background(), serveHost(t, echoServe), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if sess.Hello.Version != "v-remote" {
		t.Fatalf("hello = %+v", sess.Hello)
	}
	for _, id := range []string{"req-00001", "req-00002"} {
		resp, err := sess.Call(context.Background(), Request{ID: id, Argv: []string{"fm-control", "status", "t1"}})
		if err != nil || resp.ID != id || resp.Stdout != "ok\n" {
			t.Fatalf("Call(%s) = %+v, %v", id, resp, err)
		}
	}
}

func TestSessionFailuresSayWhetherAnythingWasSent(t *testing.T) {
	s := testSSH(t, "exit 0")
	ctx := context.Background()

	_, err := s.Open(ctx, serveHost(t, `echo '{"serve":"fmctl","protocol":99,"version":"v-future"}'; cat`), 5*time.Second)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "v-future") || !strings.Contains(err.Error(), "v-local") || !strings.Contains(err.Error(), "protocol 99") {
		t.Fatalf("a protocol 99 host: %v, want a mismatch naming both versions", err)
	}
	if _, err = s.Open(ctx, serveHost(t, ""), 5*time.Second); !errors.Is(err, ErrNoBinaries) {
		t.Fatalf("a host without fm-control: %v, want ErrNoBinaries", err)
	}
	start := time.Now()
	if _, err = s.Open(ctx, serveHost(t, "exec sleep 30"), 300*time.Millisecond); !errors.Is(err, ErrUnreachable) || time.Since(start) > 3*time.Second {
		t.Fatalf("a silent host: %v after %v, want ErrUnreachable within the wait", err, time.Since(start))
	}

	// The request is read and the serve dies: sent, answer lost.
	sess, err := s.Open(ctx, serveHost(t, `echo '{"serve":"fmctl","protocol":1,"version":"v"}'; read -r line; exit 0`), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	_, err = sess.Call(ctx, Request{ID: "req-lost-1", Argv: []string{"fm-send", "t1", "--", "hi"}})
	var re *Error
	if !errors.As(err, &re) || !re.Sent() || re.Request != "req-lost-1" {
		t.Fatalf("a lost answer: %v, want ErrLost naming the request", err)
	}
}
