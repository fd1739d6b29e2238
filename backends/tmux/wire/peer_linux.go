package wire

import (
	"fmt"
	"os"
	"syscall"
)

// peerProof: Linux names a socket's peer (SO_PEERCRED) and its program
// (/proc/<pid>/exe), which the wire needs to prove the server.
const peerProof = true

// peerPID is the pid of the process that listens on the socket fd is
// connected to (SO_PEERCRED).
func peerPID(fd int) (int, error) {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}

// connectUnix connects a stream socket to path without blocking (a full
// backlog fails at once), and returns it blocking.
func connectUnix(path string) (int, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// binaryKey identifies a file's content as far as stat can: reinstalling or
// rebuilding tmux changes its inode, size, modification or change time.
func binaryKey(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d:%d:%d", st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano())
}
