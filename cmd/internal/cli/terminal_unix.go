//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// TerminalWidth is the width in columns of the terminal w is, or 0 when w
// is no terminal or the terminal does not say (a pty nobody sized).
func TerminalWidth(w any) int {
	f, ok := w.(*os.File)
	if !ok || !IsTerminal(f) {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
