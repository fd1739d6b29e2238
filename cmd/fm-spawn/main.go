// Command fm-spawn launches an agent for a task, or relaunches one in place.
package main

import (
	"os"

	"fmctl/cmd/internal/spawn"
)

func main() { os.Exit(spawn.Main(os.Args)) }
