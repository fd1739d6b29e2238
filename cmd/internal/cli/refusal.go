package cli

import (
	"fmt"

	"fmctl/cmd/internal/fault"
)

// Code returns the exit code an error maps to: its fault class (a plain
// error is a failure), 0 for none.
func Code(err error) int {
	if err == nil {
		return CodeDone
	}
	return int(fault.ClassOf(err))
}

// Relayed is an outcome another host's fmctl printed, copied through
// already: Run exits with its code and prints nothing more.
type Relayed struct{ Exit int }

func (r *Relayed) Error() string { return fmt.Sprintf("relayed exit %d", r.Exit) }
