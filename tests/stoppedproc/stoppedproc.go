// Package stoppedproc starts a real process tree standing in for a pane
// whose agent was stopped with Ctrl-Z: a shell (bash) with one child whose
// argv[0] names the agent, stopped with SIGSTOP. The fake multiplexers have
// no processes of their own, so a test points them at this tree where a
// stopped agent must really be seen in the process table.
package stoppedproc

import (
	"bufio"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Tree is a running stand-in shell and its stopped child.
type Tree struct {
	Shell int // the shell's pid
	Agent int // the stopped child's pid
	cmd   *exec.Cmd
}

// Start runs `bash -c` with a child `sleep` exec'd under argv[0] agent, and
// stops the child. Close ends both.
func Start(agent string) (*Tree, error) {
	if strings.ContainsAny(agent, " '\"\\$`") {
		return nil, fmt.Errorf("agent name %q needs no quoting here", agent)
	}
	cmd := exec.Command("bash", "-c", "(exec -a "+agent+" sleep 600) & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start stand-in shell: %w", err)
	}
	t := &Tree{Shell: cmd.Process.Pid, cmd: cmd}
	line, err := bufio.NewReader(out).ReadString('\n')
	if t.Agent, _ = strconv.Atoi(strings.TrimSpace(line)); err != nil || t.Agent <= 0 {
		t.Close()
		return nil, fmt.Errorf("read the child's pid: %q, %v", line, err)
	}
	// The child is stopped only once it has exec'd: stopped earlier, it is
	// still the forked shell and would not be named agent.
	if err := t.waitPS("args=", agent+" ", 2*time.Second); err != nil {
		t.Close()
		return nil, err
	}
	if err := syscall.Kill(t.Agent, syscall.SIGSTOP); err != nil {
		t.Close()
		return nil, fmt.Errorf("stop %d: %w", t.Agent, err)
	}
	if err := t.waitPS("stat=", "T", 2*time.Second); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// waitPS polls ps until the child's column reads with the prefix, so a
// test never races the exec or the signal.
func (t *Tree) waitPS(column, prefix string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		out, err := exec.Command("ps", "-o", column, "-p", strconv.Itoa(t.Agent)).Output()
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(out))+" ", prefix) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("child %d: ps -o %s is %q (%v) after %s, want %q", t.Agent, column, out, err, limit, prefix)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Close kills the child (a stopped process takes SIGKILL) and the shell.
func (t *Tree) Close() {
	if t.Agent > 0 {
		_ = syscall.Kill(t.Agent, syscall.SIGKILL)
	}
	_ = t.cmd.Process.Kill()
	_ = t.cmd.Wait()
}
