// Command tmux is the fake tmux as a standalone binary.
package main

import (
	"os"

	tmuxfake "fmctl/tests/fakes/tmux"
)

func main() { os.Exit(tmuxfake.Main()) }
