// Command zellij is the fake zellij CLI built as a standalone binary.
package main

import (
	"os"

	zellijfake "fmctl/tests/fakes/zellij"
)

func main() { os.Exit(zellijfake.Main()) }
