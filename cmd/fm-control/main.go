// Command fm-control runs an allowlisted lifecycle verb on a task's agent.
package main

import (
	"os"

	"fmctl/cmd/internal/control"
)

func main() { os.Exit(control.Main(os.Args)) }
