// Package privtmux ends a test's private tmux server (tmux -L <unique>)
// and removes its socket file: tmux 3.3a leaves that file behind after
// kill-server, and one real-agent tier run's labs left some hundred of
// them in the user's tmux directory.
package privtmux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Kill ends the private server named sock, which tmux addresses (a command
// for that server, with its environment: tmux -L sock <args>), and removes
// its socket file. The file is where the running server says it is, or,
// for a server already gone, where tmux puts one named sock.
func Kill(tmux func(args ...string) *exec.Cmd, sock string) {
	printed, err := tmux("display-message", "-p", "#{socket_path}").Output()
	path := strings.TrimSpace(string(printed))
	if err != nil || path == "" {
		path = defaultPath(sock)
	}
	_ = tmux("kill-server").Run()
	removeSocket(path, sock)
}

// defaultPath is where tmux makes the socket of a server named sock:
// $TMUX_TMPDIR (else /tmp), then tmux-<uid>.
func defaultPath(sock string) string {
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), sock)
}

// removeSocket removes path if it names sock and is a socket: a path read
// wrong, or anyone else's file, is left alone.
func removeSocket(path, sock string) {
	if sock == "" || filepath.Base(path) != sock {
		return
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(path)
	}
}
