package scripts

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/control"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/send"
	"fmctl/cmd/internal/spawn"
	"fmctl/cmd/internal/teardown"
	"fmctl/config"
)

// Help is read on a terminal: no line of any page is wider than
// cli.MaxWidth (help is laid out for it when stdout is no terminal), and a
// verb's page fits a screen of verbPageLines. A binary's own page lists
// its flags or its verbs too, so it gets binaryPageLines; fm-spawn's
// eighteen flags alone take half of that.
const (
	verbPageLines   = 40
	binaryPageLines = 55
	spawnPageLines  = 70
)

func helpOf(t *testing.T, app func(edge.Deps) *ucli.Command, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	d := edge.Deps{Env: func(string) string { return "" }, Tunables: config.DefaultTunables(), Stdout: &out, Stderr: &errOut, Output: &cli.Output{}}
	if code := cli.Run(app(d), args, d.IO()); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

func checkPage(t *testing.T, page string, maxLines int, what string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(page, "\n"), "\n")
	if len(lines) > maxLines {
		t.Errorf("%s: %d lines, more than %d", what, len(lines), maxLines)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > cli.MaxWidth {
			t.Errorf("%s: a line of %d columns: %s", what, n, l)
		}
	}
	if !strings.Contains(page, "--help-exits") {
		t.Errorf("%s: does not say where the exit codes' meanings are", what)
	}
}

func TestHelpFitsAScreen(t *testing.T) {
	for _, c := range []struct {
		name  string
		app   func(edge.Deps) *ucli.Command
		lines int
	}{
		{"fm-send", send.App, binaryPageLines},
		{"fm-spawn", spawn.App, spawnPageLines},
		{"fm-teardown", teardown.App, binaryPageLines},
		{"fm-control", control.App, binaryPageLines},
	} {
		checkPage(t, helpOf(t, c.app, c.name, "--help"), c.lines, c.name+" --help")
	}
	var verbs []string
	tun := config.DefaultTunables()
	for _, cmd := range control.App(edge.Deps{Env: func(string) string { return "" }, Tunables: tun, Output: &cli.Output{}}).Commands {
		if !cmd.Hidden && cmd.Name != "help" {
			verbs = append(verbs, cmd.Name)
		}
	}
	if len(verbs) < 10 {
		t.Fatalf("only %d fm-control verbs: %v", len(verbs), verbs)
	}
	for _, v := range verbs {
		checkPage(t, helpOf(t, control.App, "fm-control", "help", v), verbPageLines, "fm-control help "+v)
	}
	exits := helpOf(t, send.App, "fm-send", "--help-exits")
	for _, c := range cli.ExitCodes() {
		if !strings.Contains(strings.Join(strings.Fields(exits), " "), c.Meaning) {
			t.Errorf("--help-exits lacks code %d's meaning", c.Code)
		}
	}
	checkPage(t, exits+"--help-exits", 20, "--help-exits")
}
