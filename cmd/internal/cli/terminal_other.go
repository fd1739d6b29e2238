//go:build !unix

package cli

// TerminalWidth cannot ask a terminal its size here: 0, unknown.
func TerminalWidth(any) int { return 0 }
