package remotessh

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"fmctl/tests/privtmux"
)

// tmuxCmd is a tmux call on the host's private server.
func (h *host) tmuxCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(tmuxBin, append([]string{"-L", h.sock}, args...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX") && !strings.HasPrefix(kv, "FM_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HISTFILE=/dev/null", "PS1=$ ", "HOME="+filepath.Join(h.Dir, "home"))
	return cmd
}

func (h *host) tmux(args ...string) string {
	h.T.Helper()
	out, err := h.tmuxCmd(args...).CombinedOutput()
	if err != nil {
		h.T.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startTmux starts the host's private tmux server, session fmses.
func (h *host) startTmux() {
	h.tmux("-f", "/dev/null", "new-session", "-d", "-s", "fmses", "-x", "200", "-y", "50", "-n", "home", "--", bashBin, "--norc", "--noprofile")
	h.T.Cleanup(func() { privtmux.Kill(h.tmuxCmd, h.sock) })
	h.tmux("set-option", "-g", "automatic-rename", "off")
	h.tmux("set-option", "-g", "allow-rename", "off")
}

// agent is a fake claude in window fm-<id> of the host's tmux, with its
// task record in the host's FM_HOME.
type agent struct {
	h      *host
	id     string
	pane   string
	events string
}

// startAgent starts the fake agent as the pane's bash foreground job and
// writes its record, as tests/realtmux does on one machine.
func (h *host) startAgent(id string, env ...string) *agent {
	h.T.Helper()
	wt := filepath.Join(h.Dir, "wt-"+id)
	if err := os.MkdirAll(wt, 0o755); err != nil {
		h.T.Fatal(err)
	}
	a := &agent{h: h, id: id, events: filepath.Join(h.Dir, id+".events")}
	created := strings.Fields(h.tmux("new-window", "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}", "-t", "=fmses:",
		"-n", "fm-"+id, "-c", wt, "--", bashBin, "--norc", "--noprofile"))
	if len(created) != 3 {
		h.T.Fatalf("new-window printed %q", created)
	}
	a.pane = created[0]
	line := "FAKEAGENT_EVENTS=" + a.events + " FAKEAGENT_LOG=" + filepath.Join(h.Dir, id+".bytes")
	for _, kv := range env {
		line += " " + kv
	}
	h.tmux("send-keys", "-t", a.pane, "-l", "--", line+" "+filepath.Join(binDir, "claude"))
	h.tmux("send-keys", "-t", a.pane, "Enter")
	h.waitFor(15*time.Second, "the fake agent's screen", func() bool {
		out, _ := h.tmuxCmd("display-message", "-p", "-t", a.pane, "#{pane_current_command}").Output()
		capture, _ := h.tmuxCmd("capture-pane", "-p", "-t", a.pane).Output()
		return strings.TrimSpace(string(out)) == "claude" && strings.HasPrefix(string(capture), "claude fake agent")
	})
	writeFile(h.T, filepath.Join(h.Home, "state", id+".meta"), strings.Join([]string{
		"window=fmses:fm-" + id, "tmux_pane_id=" + created[0], "tmux_window_id=" + created[1], "tmux_pane_pid=" + created[2],
		"endpoint_task_id=" + id, "worktree=" + wt, "project=" + wt, "harness=claude", "kind=ship",
		"model=default", "effort=default", "spawn_gen=rs1"}, "\n")+"\n")
	return a
}

// submits are the texts the agent received as submitted messages.
func (a *agent) submits() []string {
	var out []string
	for _, l := range strings.Split(readFile(a.events), "\n") {
		if s, ok := strings.CutPrefix(l, "submit "); ok {
			out = append(out, s)
		}
	}
	return out
}

func (h *host) waitFor(limit time.Duration, what string, cond func() bool) {
	h.T.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			h.T.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
