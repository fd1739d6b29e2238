// These binaries live for milliseconds: sizing GOMAXPROCS from the cgroup
// costs more start-up than it could ever save.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0

// Command fm-control runs an allowlisted lifecycle verb on a task's agent.
package main

import (
	"os"

	"fmctl/cmd/internal/control"
)

func main() { os.Exit(control.Main(os.Args)) }
