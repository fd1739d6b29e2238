package remote

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"
)

// maxSocketPath is the longest path a unix socket address holds (sun_path,
// 108 bytes with its NUL).
const maxSocketPath = 107

// listenUnix listens on a unix socket at path, readable and writable by
// this user only. It is made under a temporary name, made private, then
// renamed into place: path never names a socket another user could reach,
// nor one not yet listening. It returns the listener and the socket file's
// identity, by which its owner later knows the path is still its own.
func listenUnix(path string) (*net.UnixListener, fileID, error) {
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if len(tmp) > maxSocketPath {
		return nil, fileID{}, fmt.Errorf("socket path %s is longer than a unix socket address holds", tmp)
	}
	_ = os.Remove(tmp)
	// Listening before the chmod is safe: the control directory is 0700,
	// and the keeper checks every caller's uid.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fileID{}, err
	}
	// Its owner removes path itself, only while path is still its own.
	l.SetUnlinkOnClose(false)
	fail := func(format string, args ...any) (*net.UnixListener, fileID, error) {
		l.Close()
		_ = os.Remove(tmp)
		return nil, fileID{}, fmt.Errorf(format, args...)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fail("make socket %s private: %w", tmp, err)
	}
	id, err := idOf(tmp)
	if err != nil {
		return fail("%w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail("move socket into place at %s: %w", path, err)
	}
	return l, id, nil
}

// peerCred is the user and process at the other end of a unix socket, as
// the kernel recorded them when it connected (SO_PEERCRED): not something
// the peer says, so it cannot lie about it.
func peerCred(c *net.UnixConn) (syscall.Ucred, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return syscall.Ucred{}, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return syscall.Ucred{}, err
	}
	if cerr != nil {
		return syscall.Ucred{}, fmt.Errorf("SO_PEERCRED: %w", cerr)
	}
	return *cred, nil
}

// fileID is a file's identity: its device and inode.
type fileID struct{ dev, ino uint64 }

// idOf is the identity of the file at path itself, never a symlink's target.
func idOf(path string) (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return fileID{}, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return fileID{uint64(st.Dev), st.Ino}, nil
}

// removeIfSocket removes path when it is a socket or a symlink (never
// following it): what a dead keeper leaves, or nothing fmctl made. Anything
// else there is refused, not removed.
func removeIfSocket(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.Mode()&(fs.ModeSocket|fs.ModeSymlink) == 0 {
		return fmt.Errorf("%s is not a socket; remove it", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// flockFile takes an exclusive lock on path (made 0600, never through a
// symlink), trying until deadline. release unlocks and closes it.
func flockFile(path string, deadline time.Time) (release func(), err error) {
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(fd, syscall.LOCK_UN); syscall.Close(fd) }, nil
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			syscall.Close(fd)
			return nil, &fs.PathError{Op: "flock", Path: path, Err: err}
		}
		if time.Now().After(deadline) {
			syscall.Close(fd)
			return nil, fmt.Errorf("%s is held by another process", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
