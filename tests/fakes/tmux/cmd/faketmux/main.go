// Command faketmux arranges the fake tmux's world for tests.
package main

import (
	"os"

	tmuxfake "fmctl/tests/fakes/tmux"
)

func main() { os.Exit(tmuxfake.Control()) }
