// These binaries live for milliseconds: sizing GOMAXPROCS from the cgroup
// costs more start-up than it could ever save.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0

// Command fm-teardown finishes a task whose work has landed.
package main

import (
	"os"

	"fmctl/cmd/internal/teardown"
)

func main() { os.Exit(teardown.Main(os.Args)) }
