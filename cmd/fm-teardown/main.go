// Command fm-teardown finishes a task whose work has landed.
package main

import (
	"os"

	"fmctl/cmd/internal/teardown"
)

func main() { os.Exit(teardown.Main(os.Args)) }
