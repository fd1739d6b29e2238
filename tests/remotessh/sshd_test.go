// Package remotessh runs fmctl across hosts against real OpenSSH: each test
// host is a private sshd on a loopback port, started by the test, with its
// own host key, FM_HOME, HOME and tmux server (tmux -L <unique>); the
// client reaches it with a fresh key through its own ssh config (FM_SSH_CONFIG)
// and known_hosts, host keys checked. No traffic leaves this machine.
package remotessh

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fmctl/remote"
	"fmctl/tests/testbin"
)

const sshdBin = "/usr/sbin/sshd"

var (
	binDir  string // fm-send, fm-control, fm-spawn and the fake agent
	tmuxBin string
	bashBin string
	skipWhy string // why every test skips, when it does
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	var missing []string
	if _, err := os.Stat(sshdBin); err != nil {
		missing = append(missing, sshdBin+" (Debian's openssh-server)")
	}
	var err error
	if tmuxBin, err = exec.LookPath("tmux"); err != nil {
		missing = append(missing, "tmux")
	}
	if bashBin, err = exec.LookPath("bash"); err != nil {
		missing = append(missing, "bash")
	}
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "remotessh: CI must run the fleet tests, and %s is missing (.ci/run installs openssh-server)\n", strings.Join(missing, ", "))
			return 1
		}
		skipWhy = "the real-sshd fleet tests need " + strings.Join(missing, ", ") + " (CI installs them, so they run there)"
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "fmctl-remotessh-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "remotessh: build:", err)
		return 1
	}
	binDir = dir
	return m.Run()
}

func build(dir string) error {
	if err := testbin.Build(testbin.Dir(dir), nil, "./cmd/fm-send", "./cmd/fm-control", "./cmd/fm-spawn", "./cmd/fm-teardown"); err != nil {
		return err
	}
	return testbin.Build(filepath.Join(dir, "claude"), nil, "./tests/fakeagent")
}

func requireSSHD(t testing.TB) {
	t.Helper()
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
}

// shortDir is a fresh directory with a short path: unix socket paths (the
// ssh control socket, tmux's) are limited to about 100 bytes, and t.TempDir
// names run long.
func shortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "fmr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func randomName(t testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// host is one test host: a private sshd and what its sessions see.
type host struct {
	t     testing.TB
	name  string // its name in hosts.toml
	dir   string
	home  string // FM_HOME there
	bin   string // its binaries' dir
	sock  string // its tmux -L socket
	port  int
	sshd  *exec.Cmd
	conf  string // sshd_config
	extra string // appended to sshd_config
}

// fleet is the client machine: its FM_HOME, ssh config and keys.
type fleet struct {
	t       testing.TB
	dir     string
	home    string // the local FM_HOME, with config/hosts.toml
	sshConf string
	runtime string // XDG_RUNTIME_DIR: where the control sockets go
	key     string
	known   string
	hosts   []*host
}

func newFleet(t testing.TB) *fleet {
	t.Helper()
	requireSSHD(t)
	dir := shortDir(t)
	f := &fleet{t: t, dir: dir, home: filepath.Join(dir, "lh"), sshConf: filepath.Join(dir, "ssh_config"),
		runtime: filepath.Join(dir, "rt"), key: filepath.Join(dir, "id"), known: filepath.Join(dir, "known_hosts")}
	for _, d := range []string{f.runtime, filepath.Join(f.home, "config"), filepath.Join(f.home, "state")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fmctl-test-client", "-f", f.key)
	t.Cleanup(f.stopKeepers)
	return f
}

// keeperSockets are the keepers' sockets in the client's control dir.
func (f *fleet) keeperSockets() []string {
	paths, _ := filepath.Glob(filepath.Join(f.runtime, "fmctl-ssh", "k-*"))
	var out []string
	for _, p := range paths {
		if !strings.HasSuffix(p, ".lock") && !strings.HasSuffix(p, ".tmp") {
			out = append(out, p)
		}
	}
	return out
}

// stopKeepers stops every keeper the test's calls started: they would
// otherwise idle on for FM_HOSTS_KEEP (though each also ends once its
// socket is gone with the test's directory).
func (f *fleet) stopKeepers() {
	for _, path := range f.keeperSockets() {
		if _, err := remote.StopKeeper(path, 5*time.Second); err != nil {
			f.t.Errorf("stop keeper %s: %v", path, err)
		}
	}
}

// addHost starts a host's sshd. opts are extra sshd_config lines.
func (f *fleet) addHost(name string, sshdExtra ...string) *host {
	t := f.t
	t.Helper()
	dir := filepath.Join(f.dir, name)
	h := &host{t: t, name: name, dir: dir, home: filepath.Join(dir, "fh"), bin: binDir, sock: "fmr-" + randomName(t),
		conf: filepath.Join(dir, "sshd_config"), extra: strings.Join(sshdExtra, "\n")}
	for _, d := range []string{filepath.Join(h.home, "state"), filepath.Join(h.home, "data"), filepath.Join(h.home, "config"), filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "hostkey"))
	pub, err := os.ReadFile(f.key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "authorized_keys"), string(pub))
	h.port = freePort(t)
	hostPub, err := os.ReadFile(filepath.Join(dir, "hostkey.pub"))
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, f.known, fmt.Sprintf("[127.0.0.1]:%d %s", h.port, hostPub))
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, f.sshConf, fmt.Sprintf(`Host %s
  HostName 127.0.0.1
  Port %d
  User %s
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  LogLevel ERROR
`, name, h.port, me.Username, f.key, f.known))
	f.hosts = append(f.hosts, h)
	f.writeHostsTOML()
	h.startSSHD()
	h.startTmux()
	return h
}

// writeHostsTOML names every host, each at its own home and bin.
func (f *fleet) writeHostsTOML() {
	var b strings.Builder
	for _, h := range f.hosts {
		fmt.Fprintf(&b, "[hosts.%s]\nssh = %q\nhome = %q\nbin = %q\n\n", h.name, h.name, h.home, h.bin)
	}
	writeFile(f.t, filepath.Join(f.home, "config", "hosts.toml"), b.String())
}

func (h *host) startSSHD() {
	t := h.t
	t.Helper()
	if os.Geteuid() == 0 {
		// sshd run by root insists on its privilege-separation directory,
		// which the package's service would create.
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	writeFile(t, h.conf, fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s
PidFile none
AuthorizedKeysFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
PrintMotd no
SetEnv HOME=%s FM_TMUX_SOCKET=%s FM_TMUX_SESSION=fmses XDG_RUNTIME_DIR=%s
%s
`, h.port, filepath.Join(h.dir, "hostkey"), filepath.Join(h.dir, "authorized_keys"), filepath.Join(h.dir, "home"), h.sock, filepath.Join(h.dir, "home"), h.extra))
	cmd := exec.Command(sshdBin, "-D", "-e", "-f", h.conf)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logf, err := os.Create(filepath.Join(h.dir, "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h.sshd = cmd
	t.Cleanup(h.killSSHD)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(h.port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd on port %d did not listen: %v\n%s", h.port, err, readFile(filepath.Join(h.dir, "sshd.log")))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killSSHD kills the host's sshd and every sshd process serving a
// connection (its descendants named sshd, found before the listener dies);
// the sessions' own processes run on, as after sshd crashed.
func (h *host) killSSHD() {
	if h.sshd == nil || h.sshd.Process == nil {
		return
	}
	victims := append(sshdDescendants(h.sshd.Process.Pid), h.sshd.Process.Pid)
	for _, pid := range victims {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = h.sshd.Wait()
	h.sshd = nil
}

// sshdDescendants are the processes below root whose name is sshd, read
// from /proc.
func sshdDescendants(root int) []int {
	children := map[int][]int{}
	names := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the
		// last ')'.
		open, end := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(stat[end+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], pid)
		names[pid] = string(stat[open+1 : end])
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if names[c] == "sshd" {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// result is one finished run of a local binary.
type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %v\nstdout: %q\nstderr: %q", r.code, r.elapsed.Round(time.Millisecond), r.stdout, r.stderr)
}

// env is the client's environment: its home, its ssh config, its own
// runtime dir, and nothing of the test process's FM_* or tmux.
func (f *fleet) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "FM_") || strings.HasPrefix(kv, "TMUX") || strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "FM_HOME="+f.home, "FM_SSH_CONFIG="+f.sshConf, "XDG_RUNTIME_DIR="+f.runtime,
		"FM_SSH_CONNECT_TIMEOUT=5"), extra...)
}

// run runs a local binary; limit bounds it, so a hang fails the test.
func (f *fleet) run(limit time.Duration, extraEnv []string, bin string, args ...string) result {
	f.t.Helper()
	return f.runInput(limit, "", extraEnv, bin, args...)
}

// runInput is run with stdin as the binary's standard input.
func (f *fleet) runInput(limit time.Duration, stdin string, extraEnv []string, bin string, args ...string) result {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, bin), args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = f.env(extraEnv...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		f.t.Fatalf("%s %s did not finish within %v: it hung\n%s", bin, strings.Join(args, " "), limit, r)
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		f.t.Fatalf("%s %s could not run: %v", bin, strings.Join(args, " "), err)
	}
	return r
}

func wantCode(t testing.TB, r result, code int, what string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: want exit %d, got %s", what, code, r)
	}
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t testing.TB, path, content string) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(content + "\n"); err != nil {
		t.Fatal(err)
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
