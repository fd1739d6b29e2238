package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"fmctl/backends"
	"fmctl/config"
)

// SSH is how this machine reaches its hosts: the user's ssh, with the
// options fmctl insists on. Host keys are checked as the user's ssh config
// says; nothing here turns that off.
type SSH struct {
	Bin            string        // the ssh executable; "" is ssh on PATH
	ConfigFile     string        // passed with -F when set
	ConnectTimeout time.Duration // ssh's ConnectTimeout (whole seconds, rounded up)
	// ControlDir holds one control socket per host: private (0700), so no
	// other user can ride the multiplexed connection.
	ControlDir string
	// Persist is how long an idle master connection stays up.
	Persist time.Duration
	// ProbeTimeout bounds the check of an existing master: a master that
	// died or wedged leaves its socket behind, and a call through it would
	// hang, so it is checked first and replaced when it does not answer.
	ProbeTimeout time.Duration
	// LocalVersion is this build's version, named beside the host's when
	// their protocols differ.
	LocalVersion string
}

// ControlPath is host's control socket. It is named by a hash of the host's
// name and destination rather than ssh's %C, so fmctl can find it to probe,
// and stays short: a unix socket path is limited to about 100 bytes.
func (s SSH) ControlPath(h config.Host) string {
	sum := sha256.Sum256([]byte(h.Name + "\x00" + h.SSH + "\x00" + s.ConfigFile))
	return filepath.Join(s.ControlDir, fmt.Sprintf("h-%x", sum[:8]))
}

// baseArgs are the options of every call to host.
func (s SSH) baseArgs(h config.Host) []string {
	var args []string
	if s.ConfigFile != "" {
		args = append(args, "-F", s.ConfigFile)
	}
	secs := int(math.Ceil(s.ConnectTimeout.Seconds()))
	return append(args,
		// Never a password or passphrase prompt: fmctl has no terminal to
		// ask on, and a prompt would hang the call.
		"-o", "BatchMode=yes",
		"-o", fmt.Sprintf("ConnectTimeout=%d", max(1, secs)),
		"-o", "ControlMaster=auto",
		"-o", "ControlPath="+s.ControlPath(h),
		"-o", fmt.Sprintf("ControlPersist=%d", max(1, int(s.Persist.Seconds()))),
		// A partition is noticed by the master within about 15 s, not
		// when TCP gives up.
		"-o", "ServerAliveInterval=5",
		"-o", "ServerAliveCountMax=3",
		"-T",
	)
}

// CommandArgs is the ssh command line running the words of remote on host.
// ssh hands the remote side one string to its login shell, so every word
// is single-quoted for it.
func (s SSH) CommandArgs(h config.Host, remote ...string) []string {
	quoted := make([]string, len(remote))
	for i, w := range remote {
		quoted[i] = ShellQuote(w)
	}
	return append(s.baseArgs(h), "--", h.SSH, strings.Join(quoted, " "))
}

// ShellQuote quotes w for a POSIX shell: inside single quotes nothing is
// special but the quote itself.
func ShellQuote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

func (s SSH) bin() string {
	if s.Bin == "" {
		return "ssh"
	}
	return s.Bin
}

// PrepareControlDir makes the control directory, or checks the one there:
// a real directory (not a symlink), the user's own, mode 0700.
func (s SSH) PrepareControlDir() error {
	if err := os.MkdirAll(s.ControlDir, 0o700); err != nil {
		return fmt.Errorf("make ssh control dir %s: %w", s.ControlDir, err)
	}
	info, err := os.Lstat(s.ControlDir)
	if err != nil {
		return fmt.Errorf("ssh control dir %s: %w", s.ControlDir, err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	switch {
	case !info.IsDir():
		return fmt.Errorf("ssh control dir %s is not a directory (a symlink?); fmctl keeps its control sockets only in a private directory of its own", s.ControlDir)
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("ssh control dir %s belongs to another user; remove it", s.ControlDir)
	case info.Mode().Perm() != 0o700:
		// Ours, only too open: another user could connect to a socket in
		// it and ride the connection, so it is closed before any is made.
		if err := os.Chmod(s.ControlDir, 0o700); err != nil {
			return fmt.Errorf("make ssh control dir %s private: %w", s.ControlDir, err)
		}
	}
	return nil
}

// ReplaceStaleMaster probes host's control socket, if there is one, and
// removes it when its master does not answer `ssh -O check` within
// ProbeTimeout: a dead master's socket refuses, a wedged one's accepts and
// never answers, and either would fail or hang the call. It reports
// whether one was removed.
func (s SSH) ReplaceStaleMaster(ctx context.Context, h config.Host) (bool, error) {
	path := s.ControlPath(h)
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ssh control socket %s: %w", path, err)
	}
	if info.Mode()&fs.ModeSocket == 0 {
		return false, fmt.Errorf("ssh control path %s is not a socket; remove it", path)
	}
	if s.sshControl(ctx, h, "check") {
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		// The check was cut short, not answered: the master may be fine.
		return false, fmt.Errorf("check ssh control socket %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("remove stale ssh control socket %s: %w", path, err)
	}
	return true, nil
}

// ExitMaster closes host's master connection, if one answers (ssh -O
// exit), and reports whether there was one; a stale socket is removed.
func (s SSH) ExitMaster(ctx context.Context, h config.Host) bool {
	path := s.ControlPath(h)
	if _, err := os.Lstat(path); err != nil {
		return false
	}
	if removed, err := s.ReplaceStaleMaster(ctx, h); err != nil || removed {
		return false
	}
	return s.sshControl(ctx, h, "exit")
}

// sshControl asks the master ssh -O op (check or exit) within
// ProbeTimeout.
func (s SSH) sshControl(ctx context.Context, h config.Host, op string) bool {
	ctx, cancel := context.WithTimeout(ctx, s.ProbeTimeout)
	defer cancel()
	args := append(s.baseArgs(h), "-O", op, "--", h.SSH)
	// A wedged ssh is killed with its whole group at the deadline.
	return backends.Cmd{Path: s.bin(), Args: args}.Command(ctx).Run() == nil
}

// DefaultControlDir is where control sockets go: the user's runtime dir
// (private, and emptied at logout, as sockets should be), else the cache.
func DefaultControlDir(env config.Env) (string, error) {
	if dir := env("XDG_RUNTIME_DIR"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "fmctl-ssh"), nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no directory for ssh control sockets (set XDG_RUNTIME_DIR or HOME): %w", err)
	}
	return filepath.Join(dir, "fmctl", "ssh"), nil
}

// Run runs the words of remote on host once, over the multiplexed
// connection, with stdin as its input, within ctx; it returns what it
// printed. An exit of 255 is ssh's own failure: ErrUnreachable.
func (s SSH) Run(ctx context.Context, h config.Host, stdin io.Reader, remote ...string) ([]byte, error) {
	if err := s.PrepareControlDir(); err != nil {
		return nil, &Error{Kind: ErrUnreachable, Host: h.Name, Msg: err.Error()}
	}
	if _, err := s.ReplaceStaleMaster(ctx, h); err != nil {
		return nil, &Error{Kind: ErrUnreachable, Host: h.Name, Msg: err.Error()}
	}
	cmd := backends.Cmd{Path: s.bin(), Args: s.CommandArgs(h, remote...)}.Command(ctx)
	var out bytes.Buffer
	errs := &tail{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, errs
	err := cmd.Run()
	switch {
	case err == nil:
		return out.Bytes(), nil
	case ctx.Err() != nil:
		return nil, &Error{Kind: ErrLost, Host: h.Name, Msg: fmt.Sprintf("%s on host %s did not finish in time", remote[0], h.Name), Detail: errs.last()}
	case cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 255:
		return nil, &Error{Kind: ErrUnreachable, Host: h.Name, Msg: fmt.Sprintf("ssh could not reach host %s (%s)", h.Name, h.SSH), Detail: errs.last()}
	}
	return nil, fmt.Errorf("%s on host %s failed: %v: %s", remote[0], h.Name, err, errs.last())
}
