package remote

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// The keeper's socket, without the net package (see unixConn in
// muxprobe.go): nonblocking descriptors handed to os.NewFile join the
// runtime's poller, so reads, writes and accepts get deadlines and a Close
// from another goroutine wakes them.

// maxSocketPath is the longest path a unix socket address holds (sun_path,
// 108 bytes with its NUL).
const maxSocketPath = 107

// listenUnix listens on a unix socket at path, readable and writable by
// this user only. It is made under a temporary name, made private, then
// renamed into place: path never names a socket another user could reach,
// nor one not yet listening. It returns the listener and the socket file's
// identity, by which its owner later knows the path is still its own.
func listenUnix(path string) (*os.File, fileID, error) {
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if len(tmp) > maxSocketPath {
		return nil, fileID{}, fmt.Errorf("socket path %s is longer than a unix socket address holds", tmp)
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fileID{}, fmt.Errorf("socket: %w", err)
	}
	fail := func(format string, args ...any) (*os.File, fileID, error) {
		syscall.Close(fd)
		_ = os.Remove(tmp)
		return nil, fileID{}, fmt.Errorf(format, args...)
	}
	_ = os.Remove(tmp)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: tmp}); err != nil {
		return fail("bind %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fail("make socket %s private: %w", tmp, err)
	}
	if err := syscall.Listen(fd, 64); err != nil {
		return fail("listen on %s: %w", tmp, err)
	}
	id, err := idOf(tmp)
	if err != nil {
		return fail("%w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail("move socket into place at %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), id, nil
}

// acceptUnix waits for the next connection on l, until l is closed or its
// read deadline passes. The connection is nonblocking, so it too has
// deadlines.
func acceptUnix(l *os.File) (*os.File, error) {
	rc, err := l.SyscallConn()
	if err != nil {
		return nil, err
	}
	var nfd int
	var aerr error
	err = rc.Read(func(fd uintptr) bool {
		nfd, _, aerr = syscall.Accept4(int(fd), syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
		return aerr != syscall.EAGAIN
	})
	if err != nil {
		return nil, err
	}
	if aerr != nil {
		return nil, aerr
	}
	return os.NewFile(uintptr(nfd), l.Name()), nil
}

// dialUnixFile connects to the unix socket at path. A unix connect does not
// wait: it succeeds, or is refused (no listener: a stale socket), or finds
// nothing there, or finds the listener's backlog full (EAGAIN).
func dialUnixFile(path string) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("connect %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// peerCred is the user and process at the other end of a unix socket, as
// the kernel recorded them when it connected (SO_PEERCRED): not something
// the peer says, so it cannot lie about it.
func peerCred(f *os.File) (syscall.Ucred, error) {
	rc, err := f.SyscallConn()
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
