package control

import (
	"github.com/urfave/cli/v2"

	"fmctl/cliapp"
)

// completeTaskIDs completes a verb's task id and its flags' values.
func completeTaskIDs(d cliapp.Deps) cli.BashCompleteFunc { return cliapp.CompleteTaskArgs(d) }
