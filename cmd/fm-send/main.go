// These binaries live for milliseconds: sizing GOMAXPROCS from the cgroup
// costs more start-up than it could ever save.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0

// Command fm-send delivers conversational text (or one named key) to a task's agent.
package main

import (
	"os"

	"fmctl/cmd/internal/send"
)

func main() { os.Exit(send.Main(os.Args)) }
