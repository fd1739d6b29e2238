// Package sshlab starts real OpenSSH servers on loopback for the tests that
// run fmctl across hosts (tests/remotessh with a fake agent, tests/agents
// with the real CLIs): each host is a private sshd on a free port, started
// by the test, with its own host key and the environment its sessions see
// (SetEnv); the client reaches it with a fresh key through its own ssh
// config (FM_SSH_CONFIG) and known_hosts, host keys checked, and names it
// in its FM_HOME's config/hosts.toml. No traffic leaves this machine.
package sshlab

import (
	"context"
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

	"fmctl/backends/proc"
	"fmctl/remote"
)

// SSHDBin is where Debian's openssh-server puts the daemon.
const SSHDBin = "/usr/sbin/sshd"

// Missing names what this machine lacks to run a fleet (nil: nothing).
func Missing() []string {
	var missing []string
	if _, err := os.Stat(SSHDBin); err != nil {
		missing = append(missing, SSHDBin+" (Debian's openssh-server)")
	}
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	return missing
}

// Fleet is the client machine: its FM_HOME, ssh config and keys.
type Fleet struct {
	T         testing.TB
	Dir       string // every file of the fleet, a host's under Dir/<name>
	Home      string // the local FM_HOME, with config/hosts.toml
	SSHConfig string
	Runtime   string // XDG_RUNTIME_DIR: where the control sockets go
	Key       string
	Known     string
	Hosts     []*Host
}

// NewFleet makes the client's directories and key; the keepers its calls
// start are stopped when the test ends.
func NewFleet(t testing.TB) *Fleet {
	t.Helper()
	dir := ShortDir(t)
	f := &Fleet{T: t, Dir: dir, Home: filepath.Join(dir, "lh"), SSHConfig: filepath.Join(dir, "ssh_config"),
		Runtime: filepath.Join(dir, "rt"), Key: filepath.Join(dir, "id"), Known: filepath.Join(dir, "known_hosts")}
	for _, d := range []string{f.Runtime, filepath.Join(f.Home, "config"), filepath.Join(f.Home, "state")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	Run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fmctl-test-client", "-f", f.Key)
	t.Cleanup(f.StopKeepers)
	return f
}

// HostDir is where host name's files live.
func (f *Fleet) HostDir(name string) string { return filepath.Join(f.Dir, name) }

// KeeperSockets are the keepers' sockets in the client's control dir.
func (f *Fleet) KeeperSockets() []string {
	paths, _ := filepath.Glob(filepath.Join(f.Runtime, "fmctl-ssh", "k-*"))
	var out []string
	for _, p := range paths {
		if !strings.HasSuffix(p, ".lock") && !strings.HasSuffix(p, ".tmp") {
			out = append(out, p)
		}
	}
	return out
}

// StopKeepers stops every keeper the test's calls started: they would
// otherwise idle on for FM_HOSTS_KEEP (though each also ends once its
// socket is gone with the test's directory).
func (f *Fleet) StopKeepers() {
	for _, path := range f.KeeperSockets() {
		if _, err := remote.StopKeeper(path, 5*time.Second); err != nil {
			f.T.Errorf("stop keeper %s: %v", path, err)
		}
	}
}

// HostSpec is what a new host is.
type HostSpec struct {
	Name string // its name in hosts.toml and in the ssh config
	Home string // FM_HOME there; "" = a fresh one under its dir
	Bin  string // the dir of its fm binaries
	// Env is what its sessions see (sshd's SetEnv): HOME, the tmux server
	// (FM_TMUX_SOCKET, FM_TMUX_SESSION), PATH...
	Env []string
	// Extra are more sshd_config lines.
	Extra []string
}

// Host is one test host: a private sshd and what its sessions see.
type Host struct {
	T     testing.TB
	Name  string
	Dir   string
	Home  string // FM_HOME there
	Bin   string
	Port  int
	env   []string
	extra string
	conf  string // sshd_config
	sshd  *exec.Cmd
}

// AddHost starts a host's sshd, trusted by the client and named in its
// hosts.toml.
func (f *Fleet) AddHost(spec HostSpec) *Host {
	t := f.T
	t.Helper()
	dir := f.HostDir(spec.Name)
	h := &Host{T: t, Name: spec.Name, Dir: dir, Home: spec.Home, Bin: spec.Bin, env: spec.Env,
		extra: strings.Join(spec.Extra, "\n"), conf: filepath.Join(dir, "sshd_config")}
	if h.Home == "" {
		h.Home = filepath.Join(dir, "fh")
	}
	for _, d := range []string{filepath.Join(h.Home, "state"), filepath.Join(h.Home, "data"), filepath.Join(h.Home, "config"), filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	Run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "hostkey"))
	pub, err := os.ReadFile(f.Key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(dir, "authorized_keys"), string(pub))
	h.Port = FreePort(t)
	hostPub, err := os.ReadFile(filepath.Join(dir, "hostkey.pub"))
	if err != nil {
		t.Fatal(err)
	}
	AppendFile(t, f.Known, fmt.Sprintf("[127.0.0.1]:%d %s", h.Port, hostPub))
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	AppendFile(t, f.SSHConfig, fmt.Sprintf(`Host %s
  HostName 127.0.0.1
  Port %d
  User %s
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  LogLevel ERROR
`, h.Name, h.Port, me.Username, f.Key, f.Known))
	f.Hosts = append(f.Hosts, h)
	f.WriteHostsTOML()
	h.StartSSHD()
	return h
}

// WriteHostsTOML names every host, each at its own home and bin.
func (f *Fleet) WriteHostsTOML() {
	var b strings.Builder
	for _, h := range f.Hosts {
		fmt.Fprintf(&b, "[hosts.%s]\nssh = %q\nhome = %q\nbin = %q\n\n", h.Name, h.Name, h.Home, h.Bin)
	}
	WriteFile(f.T, filepath.Join(f.Home, "config", "hosts.toml"), b.String())
}

// Env is the client's environment: its home, its ssh config, its own
// runtime dir, and nothing of the test process's FM_* or tmux.
func (f *Fleet) Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "FM_") || strings.HasPrefix(kv, "TMUX") || strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, f.ClientEnv()...), extra...)
}

// ClientEnv is what points fmctl on the client at the fleet: its FM_HOME,
// ssh config and control dir.
func (f *Fleet) ClientEnv() []string {
	return []string{"FM_HOME=" + f.Home, "FM_SSH_CONFIG=" + f.SSHConfig, "XDG_RUNTIME_DIR=" + f.Runtime, "FM_SSH_CONNECT_TIMEOUT=5"}
}

// StartSSHD starts (or, after KillSSHD, restarts) the host's sshd and waits
// until it listens.
func (h *Host) StartSSHD() {
	t := h.T
	t.Helper()
	if os.Geteuid() == 0 {
		// sshd run by root insists on its privilege-separation directory,
		// which the package's service would create.
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	// One SetEnv line: where an sshd takes only its first, a second would
	// be dropped without a word.
	setEnv := make([]string, len(h.env))
	for i, kv := range h.env {
		setEnv[i] = strconv.Quote(kv)
	}
	WriteFile(t, h.conf, fmt.Sprintf(`ListenAddress 127.0.0.1
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
SetEnv %s
%s
`, h.Port, filepath.Join(h.Dir, "hostkey"), filepath.Join(h.Dir, "authorized_keys"), strings.Join(setEnv, " "), h.extra))
	cmd := exec.Command(SSHDBin, "-D", "-e", "-f", h.conf)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logf, err := os.Create(filepath.Join(h.Dir, "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h.sshd = cmd
	t.Cleanup(h.KillSSHD)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(h.Port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd on port %d did not listen: %v\n%s", h.Port, err, ReadFile(filepath.Join(h.Dir, "sshd.log")))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// KillSSHD kills the host's sshd and every sshd process serving a
// connection (its descendants named sshd, found before the listener dies);
// the sessions' own processes run on, as after sshd crashed.
func (h *Host) KillSSHD() {
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

// sshdDescendants are the processes below root whose name is sshd (sshd
// forks from its main thread, so /proc's children lists find them all).
func sshdDescendants(root int) []int {
	table, ctx := proc.FS{Root: "/proc"}, context.Background()
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		kids, _ := table.Children(ctx, queue[0])
		queue = queue[1:]
		for _, c := range kids {
			if p, err := table.Process(ctx, c); err == nil && p.Comm == "sshd" {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// ShortDir is a fresh directory with a short path: unix socket paths (the
// ssh control socket, tmux's) are limited to about 100 bytes, and t.TempDir
// names run long.
func ShortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "fmr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// FreePort is a loopback port nothing listens on now.
func FreePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Run runs a command that must succeed, and returns its output.
func Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// WriteFile writes content to path or fails the test.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// AppendFile appends content and a newline to path or fails the test.
func AppendFile(t testing.TB, path, content string) {
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

// ReadFile is path's content, "" when it cannot be read.
func ReadFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
