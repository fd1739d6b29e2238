package control

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"fmctl/cliapp"
	"fmctl/config"
	"fmctl/state"
)

// completeTaskIDs lists the home's task ids for shell completion.
func completeTaskIDs(d cliapp.Deps) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		for _, id := range TaskIDs(d.Env) {
			fmt.Fprintln(d.Stdout, id)
		}
	}
}

// TaskIDs returns the ids of the records in the home's state dir.
func TaskIDs(env config.Env) []string {
	home, err := config.ResolveHome("fm-control", env)
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir(home.State)
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".meta")
		if ok && state.ValidTaskID(id) && e.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	return ids
}
