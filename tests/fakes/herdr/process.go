package herdrfake

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fmctl/tests/fakeframe"
)

// processInfo is herdr's PaneProcessInfo (src/api/schema/panes.rs), its
// optional fields omitted when unset as serde skips them.
type processInfo struct {
	PaneID     string        `json:"pane_id"`
	ShellPID   int           `json:"shell_pid,omitempty"`
	Foreground []fgProcessJS `json:"foreground_processes,omitempty"`
}

type fgProcessJS struct {
	PID   int      `json:"pid"`
	Name  string   `json:"name"`
	Argv0 string   `json:"argv0,omitempty"`
	Argv  []string `json:"argv,omitempty"`
}

// fakePIDBase numbers the fake's foreground processes; they name what runs
// in the pane and are never real processes.
const fakePIDBase = 4000000

// paneProcessInfo is `pane process-info --pane P`. The foreground job is
// the pane's foreground program. The fake has no real processes, so
// shell_pid is reported only when $FAKE_HERDR_DIR/shell-pid-<pane id> or,
// for every pane, $FAKE_HERDR_DIR/shell-pid names one (a test's stand-in
// process tree, where a stopped agent can really be seen, or a stand-in pane
// shell a caller runs under); otherwise it is omitted, as herdr omits it
// for a pane with no process.
func (f *fake) paneProcessInfo(args []string) int {
	pane := ""
	switch {
	case len(args) == 2 && args[0] == "--pane":
		pane = args[1]
	case len(args) == 1 && args[0] == "--pane":
		return f.usage("missing value for --pane")
	case len(args) == 0, len(args) == 1 && args[0] == "--current":
		return f.notEmulated("herdr pane process-info without --pane (the focused pane)")
	default:
		return f.usage("unknown option: " + args[0])
	}
	r, code := f.pane(pane, "cli:pane:process_info")
	if code >= 0 {
		return code
	}
	info := processInfo{PaneID: r.pane.ID}
	info.ShellPID = f.shellPID(r.pane.ID)
	n, _ := strconv.ParseInt(strings.TrimPrefix(r.pane.TerminalID, "term_fake"), 16, 32)
	fg := fgProcessJS{PID: fakePIDBase + int(n), Name: r.pane.Command, Argv0: r.pane.Command, Argv: []string{r.pane.Command}}
	if fakeframe.RunsAsScript(r.pane.Command) {
		// A script harness (gemini under node): herdr names the interpreter.
		fg.Name, fg.Argv0, fg.Argv = "node", "node", []string{"node", "/usr/local/bin/" + r.pane.Command}
	}
	info.Foreground = []fgProcessJS{fg}
	return f.respond("cli:pane:process_info", tagged("pane_process_info", field{"process_info", info}))
}

// shellPID is the stand-in shell pid a test named for the pane, 0 for none.
func (f *fake) shellPID(pane string) int {
	for _, name := range []string{"shell-pid-" + pane, "shell-pid"} {
		if data, err := os.ReadFile(filepath.Join(f.dir, name)); err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			return pid
		}
	}
	return 0
}

// suspend is Ctrl+Z: a foreground agent stops and the shell takes the
// terminal back, holding it as a job until `fg`.
func (f *fake) suspend(p *Pane) {
	if !p.isAgent() {
		return
	}
	p.say("[1]+  Stopped                 " + p.Command)
	p.Stopped, p.Command, p.Working = p.Command, "bash", false
}

// registered reports whether herdr still registers a stopped agent: the
// keeps-registration switch emulates the releases that keep an agent
// registered after it left the foreground.
func (f *fake) registered(p *Pane) bool {
	return p.Stopped != "" && f.flag("keeps-registration")
}
