// These binaries live for milliseconds: sizing GOMAXPROCS from the cgroup
// costs more start-up than it could ever save.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0

// Command fm-jq is the jq filter behind the other binaries' --jq.
package main

import (
	"os"

	"fmctl/cmd/internal/jqfilter"
)

func main() { os.Exit(jqfilter.Main(os.Args)) }
