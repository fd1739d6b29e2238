// Command herdr is the fake herdr CLI as a standalone binary, for tests that
// need a real executable on PATH (see package herdrfake).
package main

import (
	"os"

	herdrfake "fmctl/tests/fakes/herdr"
)

func main() { os.Exit(herdrfake.Main()) }
