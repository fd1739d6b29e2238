package proc

import (
	"errors"
	"strings"
	"testing"

	"fmctl/backends"
)

// fg and bg build process rows: the pane's foreground group is 20.
func fgProc(pid int, comm string, argv ...string) Process {
	return Process{PID: pid, PGID: 20, TPGID: 20, State: 'S', Comm: comm, Argv: argv}
}

func bgProc(pid int, comm string, state byte) Process {
	return Process{PID: pid, PGID: 10, TPGID: 20, State: state, Comm: comm}
}

func TestClassifyPane(t *testing.T) {
	cases := []struct {
		name    string
		procs   []Process
		procErr error
		current string
		want    backends.AgentState
	}{
		{"agent in the foreground", []Process{bgProc(1, "bash", 'S'), fgProc(2, "claude")}, nil, "claude", backends.StateAlive},
		{"agent foreground though pane_current_command says bash", []Process{fgProc(2, "codex")}, nil, "bash", backends.StateAlive},
		{"node running codex", []Process{fgProc(2, "node", "node", "/usr/lib/codex/bin/codex.js")}, nil, "node", backends.StateAlive},
		{"only a shell", []Process{fgProc(1, "bash")}, nil, "bash", backends.StateDead},
		{"only shells", []Process{fgProc(1, "zsh"), fgProc(3, "-bash")}, nil, "zsh", backends.StateDead},
		{"vim in the foreground", []Process{bgProc(1, "bash", 'S'), fgProc(2, "vim")}, nil, "vim", backends.StateUnattributed},
		{"pip is not pi", []Process{fgProc(2, "pip")}, nil, "pip", backends.StateUnattributed},
		{"no foreground, pane_current_command claude", nil, nil, "claude", backends.StateAlive},
		{"no foreground read, current command alone names the agent", []Process{bgProc(1, "bash", 'S')}, errors.New("ps failed"), "claude", backends.StateAlive},
		{"nothing readable", nil, nil, "", backends.StateUnreadable},
		{"nothing readable with a proc error", nil, errors.New("stat tty: no such file"), "", backends.StateUnreadable},
		{"stopped agent, shell in the foreground", []Process{bgProc(2, "claude", 'T'), fgProc(1, "bash")}, nil, "bash", backends.StateSuspended},
		{"stopped agent (t), no foreground, shell current", []Process{bgProc(2, "opencode", 't')}, nil, "bash", backends.StateSuspended},
		{"an agent still ending outside the foreground is not agent-free", []Process{bgProc(2, "opencode", 'S'), fgProc(1, "bash")}, nil, "bash", backends.StateUnattributed},
		{"an agent still running, no foreground read, shell current", []Process{bgProc(2, "claude", 'R')}, nil, "bash", backends.StateUnattributed},
		{"no foreground, shell current command", nil, nil, "bash", backends.StateDead},
		{"no foreground, other current command", nil, nil, "htop", backends.StateUnattributed},
		{"a zombie agent in the foreground is not alive", []Process{fgProcState(2, "claude", 'Z'), fgProc(1, "bash")}, nil, "bash", backends.StateDead},
		{"a zombie agent alone is not alive", []Process{fgProcState(2, "claude", 'Z')}, nil, "bash", backends.StateDead},
		{"tpgid 0 is no foreground", []Process{{PID: 1, PGID: 0, TPGID: 0, Comm: "claude"}}, nil, "", backends.StateUnreadable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obs := ClassifyPane(c.procs, c.procErr, c.current)
			if obs.State != c.want {
				t.Fatalf("state = %s (%s), want %s", obs.State, obs.Detail, c.want)
			}
			if obs.Detail == "" {
				t.Error("observation carries no detail")
			}
			if c.want == backends.StateAlive || c.want == backends.StateUnattributed || c.want == backends.StateSuspended {
				if len(obs.Names) == 0 {
					t.Error("a decided state names no process")
				}
			}
		})
	}
}

func TestClassifyPaneDetailNamesTheCause(t *testing.T) {
	obs := ClassifyPane(nil, errors.New("stat tty /dev/pts/9: gone"), "")
	if !strings.Contains(obs.Detail, "/dev/pts/9: gone") {
		t.Errorf("unreadable detail %q hides the proc error", obs.Detail)
	}
	obs = ClassifyPane([]Process{fgProc(2, "vim")}, nil, "vim")
	if len(obs.Names) != 1 || obs.Names[0] != "vim" || !strings.Contains(obs.Detail, "vim") {
		t.Errorf("unattributed observation = %+v, want it to name vim", obs)
	}
	obs = ClassifyPane([]Process{bgProc(2, "claude", 'T'), fgProc(1, "bash")}, nil, "bash")
	if obs.Names[0] != "claude" {
		t.Errorf("suspended names %v, want the stopped agent", obs.Names)
	}
}

// fgProcState is a foreground process in the given state (Z: a zombie).
func fgProcState(pid int, comm string, state byte) Process {
	p := fgProc(pid, comm)
	p.State = state
	return p
}
