package scripts

import (
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"fmctl/tests/stoppedproc"
)

// stoppedtree NAME FILE starts a real stand-in pane shell whose child,
// named NAME by its argv[0], is stopped as Ctrl-Z stops an agent, and
// writes the shell's pid to FILE (a fake multiplexer reports it as the
// pane's shell). Both processes end with the script.
func cmdStoppedTree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: stoppedtree NAME FILE")
	}
	tree, err := stoppedproc.Start(args[0])
	ts.Check(err)
	ts.Defer(tree.Close)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strconv.Itoa(tree.Shell)+"\n"), 0o644))
}
