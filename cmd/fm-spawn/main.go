// These binaries live for milliseconds: sizing GOMAXPROCS from the cgroup
// costs more start-up than it could ever save.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0

// Command fm-spawn launches an agent for a task, or relaunches one in place.
package main

import (
	"os"

	"fmctl/cmd/internal/spawn"
)

func main() { os.Exit(spawn.Main(os.Args)) }
