// Package remotessh runs fmctl across hosts against real OpenSSH: each test
// host is a private sshd on a loopback port (package sshlab), with its own
// FM_HOME, HOME and tmux server (tmux -L <unique>), driving a fake agent.
// No traffic leaves this machine.
package remotessh

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/tests/sshlab"
	"fmctl/tests/testbin"
)

var (
	binDir  string // fm-send, fm-control, fm-spawn and the fake agent
	tmuxBin string
	bashBin string
	skipWhy string // why every test skips, when it does
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	missing := sshlab.Missing()
	var err error
	if tmuxBin, err = exec.LookPath("tmux"); err != nil {
		missing = append(missing, "tmux")
	}
	if bashBin, err = exec.LookPath("bash"); err != nil {
		missing = append(missing, "bash")
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

func randomName(t testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// host is one test host: a private sshd and its sessions' tmux server.
type host struct {
	*sshlab.Host
	sock string // its tmux -L socket
}

// fleet is the client machine (sshlab's), with its hosts as this package
// drives them.
type fleet struct{ *sshlab.Fleet }

func newFleet(t testing.TB) *fleet {
	t.Helper()
	requireSSHD(t)
	return &fleet{sshlab.NewFleet(t)}
}

// addHost starts a host's sshd and its tmux server; its sessions see a
// HOME of their own and that server. sshdExtra are extra sshd_config lines.
func (f *fleet) addHost(name string, sshdExtra ...string) *host {
	f.T.Helper()
	sock := "fmr-" + randomName(f.T)
	home := filepath.Join(f.HostDir(name), "home")
	h := &host{sock: sock, Host: f.AddHost(sshlab.HostSpec{Name: name, Bin: binDir, Extra: sshdExtra,
		Env: []string{"HOME=" + home, "FM_TMUX_SOCKET=" + sock, "FM_TMUX_SESSION=fmses", "XDG_RUNTIME_DIR=" + home}})}
	h.startTmux()
	return h
}

// result is one finished run of a local binary.
type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
	cpu            time.Duration // user and system time, its waited children's too
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %v\nstdout: %q\nstderr: %q", r.code, r.elapsed.Round(time.Millisecond), r.stdout, r.stderr)
}

// run runs a local binary; limit bounds it, so a hang fails the test.
func (f *fleet) run(limit time.Duration, extraEnv []string, bin string, args ...string) result {
	f.T.Helper()
	return f.runInput(limit, "", extraEnv, bin, args...)
}

// runInput is run with stdin as the binary's standard input.
func (f *fleet) runInput(limit time.Duration, stdin string, extraEnv []string, bin string, args ...string) result {
	f.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, bin), args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = f.Env(extraEnv...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		r.cpu = ps.UserTime() + ps.SystemTime()
	}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		f.T.Fatalf("%s %s did not finish within %v: it hung\n%s", bin, strings.Join(args, " "), limit, r)
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		f.T.Fatalf("%s %s could not run: %v", bin, strings.Join(args, " "), err)
	}
	return r
}

func wantCode(t testing.TB, r result, code int, what string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: want exit %d, got %s", what, code, r)
	}
}

// The file helpers are sshlab's, under the names the tests here use.
var (
	writeFile  = sshlab.WriteFile
	appendFile = sshlab.AppendFile
	readFile   = sshlab.ReadFile
)
