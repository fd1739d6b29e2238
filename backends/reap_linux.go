package backends

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// awaitExit waits until process pid has exited, without reaping it: until
// it is reaped its pid, which is its process group's id, cannot be given
// to another process, so a kill of the group sent meanwhile reaches only
// the call's own processes. It reports whether it waited.
func awaitExit(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return err == nil
		}
	}
}
