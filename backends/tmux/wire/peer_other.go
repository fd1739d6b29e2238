//go:build !linux

package wire

import (
	"errors"
	"os"
)

// peerProof: only Linux names a socket's peer here, so elsewhere every
// tmux call is a tmux client.
const peerProof = false

func peerPID(int) (int, error) {
	return 0, errors.New("no peer credentials on this system")
}

func connectUnix(string) (int, error) {
	return -1, errors.New("the tmux wire runs on Linux only")
}

// binaryKey: no identity, so no cache.
func binaryKey(os.FileInfo) string { return "" }
