//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// ReaderGone reports whether w is a pipe or socket whose reading end was
// closed (`fm-control list --watch | head -1` after head exits). A stream
// that prints only on change would otherwise learn it from its next write,
// which may never come; poll(2) says it at once, without writing.
func ReaderGone(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: 0}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}
