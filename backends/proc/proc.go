// Package proc reads the local process table (/proc, or ps where there is
// none) and classifies what runs on a terminal. Every adapter that can see
// a pane's processes shares it; it knows no multiplexer.
package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"fmctl/backends"
)

// Process is one row of the process table for a terminal.
type Process struct {
	PID   int
	PPID  int
	PGID  int
	TPGID int  // foreground process group of the process's terminal
	State byte // R, S, T (stopped), Z, ...
	Comm  string
	Argv  []string
}

// Exited reports whether the process has ended and waits only to be reaped
// (a zombie): it takes no input, whatever its name and terminal still say.
func (p Process) Exited() bool { return p.State == 'Z' || p.State == 'X' }

// Foreground reports whether the process is in its terminal's foreground group.
func (p Process) Foreground() bool { return p.PGID == p.TPGID && p.TPGID > 0 }

// Table lists the processes attached to a terminal.
type Table interface {
	OnTTY(ctx context.Context, tty string) ([]Process, error)
	// Process reads one process by pid.
	Process(ctx context.Context, pid int) (Process, error)
	// Children lists a process's direct children.
	Children(ctx context.Context, pid int) ([]int, error)
}

// StatTable is an optional Table ability: read one process by pid without
// its argv, for a caller that needs only its state, parent and groups (a
// pane's shell, whose foreground group names the agent).
type StatTable interface {
	Stat(ctx context.Context, pid int) (Process, error)
}

// TreeTable is an optional Table ability: list a terminal's processes
// by walking one process tree rather than every process.
type TreeTable interface {
	OnTTYUnder(ctx context.Context, tty string, root int) ([]Process, error)
}

// NewTable reads /proc directly where it exists (no process spawned, about
// a millisecond), and falls back to ps elsewhere.
func NewTable(r backends.Runner) Table {
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		return FS{Root: "/proc"}
	}
	return PS{Runner: r}
}

// FS reads the Linux /proc filesystem.
type FS struct{ Root string }

func (p FS) OnTTY(_ context.Context, tty string) ([]Process, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(tty, &st); err != nil {
		return nil, fmt.Errorf("stat tty %s: %w", tty, err)
	}
	want := devNumber(uint64(st.Rdev))
	dir, err := os.Open(p.Root)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p.Root, err)
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p.Root, err)
	}
	var out []Process
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		data, err := os.ReadFile(filepath.Join(p.Root, name, "stat"))
		if err != nil {
			continue // the process exited while we looked
		}
		proc, ttyNr, ok := parseProcStat(data)
		if !ok || devNumber(ttyNr) != want {
			continue
		}
		if cmdline, err := os.ReadFile(filepath.Join(p.Root, name, "cmdline")); err == nil {
			proc.Argv = splitCmdline(cmdline)
		}
		out = append(out, proc)
	}
	return out, nil
}

// MaxTree bounds a descendant walk: a pane with more processes than this is
// read by the full scan instead.
const MaxTree = 512

// OnTTYUnder lists the processes on tty that descend from root (a pane's
// shell), reading only that tree instead of every process on the machine,
// whose cost grows with everything the machine runs. A process that left
// the tree (its parent died and it was re-parented) is not seen: callers
// fall back to OnTTY when the tree holds no member of the terminal's
// foreground group.
func (p FS) OnTTYUnder(_ context.Context, tty string, root int) ([]Process, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(tty, &st); err != nil {
		return nil, fmt.Errorf("stat tty %s: %w", tty, err)
	}
	want := devNumber(uint64(st.Rdev))
	var out []Process
	queue := []int{root}
	for len(queue) > 0 {
		if len(out)+len(queue) > MaxTree {
			return nil, fmt.Errorf("process tree under %d holds more than %d processes", root, MaxTree)
		}
		pid := queue[0]
		queue = queue[1:]
		dir := filepath.Join(p.Root, strconv.Itoa(pid))
		data, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			if pid == root {
				return nil, fmt.Errorf("read process %d: %w", pid, err)
			}
			continue // the process exited while we looked
		}
		proc, ttyNr, ok := parseProcStat(data)
		if !ok {
			continue
		}
		if kids, err := p.Children(context.Background(), pid); err == nil {
			queue = append(queue, kids...)
		} else if pid == root {
			return nil, err
		}
		if devNumber(ttyNr) != want {
			continue
		}
		if cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
			proc.Argv = splitCmdline(cmdline)
		}
		out = append(out, proc)
	}
	return out, nil
}

func (p FS) Process(ctx context.Context, pid int) (Process, error) {
	proc, err := p.Stat(ctx, pid)
	if err != nil {
		return Process{}, err
	}
	if cmdline, err := os.ReadFile(filepath.Join(p.Root, strconv.Itoa(pid), "cmdline")); err == nil {
		proc.Argv = splitCmdline(cmdline)
	}
	return proc, nil
}

// ParentPID reads one process's parent from its stat line alone (no
// cmdline): a caller's ancestry is walked this way on every invocation.
func (p FS) ParentPID(pid int) (int, error) {
	proc, err := p.Stat(context.Background(), pid)
	return proc.PPID, err
}

// Stat reads one process from its stat line alone: no Argv, one file
// where Process reads two (the cmdline the costlier).
func (p FS) Stat(_ context.Context, pid int) (Process, error) {
	data, err := os.ReadFile(filepath.Join(p.Root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return Process{}, fmt.Errorf("read process %d: %w", pid, err)
	}
	proc, _, ok := parseProcStat(data)
	if !ok {
		return Process{}, fmt.Errorf("process %d: unparsable stat", pid)
	}
	return proc, nil
}

func (p FS) Children(_ context.Context, pid int) ([]int, error) {
	id := strconv.Itoa(pid)
	data, err := os.ReadFile(filepath.Join(p.Root, id, "task", id, "children"))
	if err != nil {
		return nil, fmt.Errorf("read children of %d: %w", pid, err)
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// devNumber normalises both the kernel's 32-bit tty_nr encoding and the
// 64-bit st_rdev encoding to one comparable major/minor pair.
func devNumber(d uint64) uint64 {
	major := (d>>8)&0xfff | (d>>32)&^0xfff
	minor := d&0xff | (d>>12)&^0xff&0xffffff00
	return major<<32 | minor
}

// parseProcStat reads /proc/<pid>/stat. comm may hold spaces and parentheses,
// so fields are counted from the last ')'.
func parseProcStat(data []byte) (Process, uint64, bool) {
	open := bytes.IndexByte(data, '(')
	close := bytes.LastIndexByte(data, ')')
	if open < 0 || close < open {
		return Process{}, 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data[:open])))
	if err != nil {
		return Process{}, 0, false
	}
	f := strings.Fields(string(data[close+1:]))
	// state ppid pgrp session tty_nr tpgid
	if len(f) < 6 || len(f[0]) == 0 {
		return Process{}, 0, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	ttyNr, _ := strconv.ParseUint(f[4], 10, 64)
	tpgid, _ := strconv.Atoi(f[5])
	return Process{PID: pid, PPID: ppid, PGID: pgid, TPGID: tpgid, State: f[0][0], Comm: string(data[open+1 : close])}, ttyNr, true
}

func splitCmdline(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	parts := bytes.Split(b, []byte{0})
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// PS asks ps, for systems without /proc.
type PS struct{ Runner backends.Runner }

func (p PS) OnTTY(ctx context.Context, tty string) ([]Process, error) {
	out, err := p.Runner.Run(ctx, backends.Cmd{Path: "ps", Args: []string{"-t", strings.TrimPrefix(tty, "/dev/"), "-o", "pid=,pgid=,tpgid=,stat=,comm="}})
	if err != nil {
		// ps exits 1 when no process matches, which is an empty table.
		if len(bytes.TrimSpace(out.Stdout)) == 0 && out.ExitCode == 1 {
			return nil, nil
		}
		return nil, fmt.Errorf("ps -t %s: %w", tty, err)
	}
	return parsePS(out.Stdout), nil
}

func (p PS) Process(ctx context.Context, pid int) (Process, error) {
	out, err := p.Runner.Run(ctx, backends.Cmd{Path: "ps", Args: []string{"-p", strconv.Itoa(pid), "-o", "pid=,pgid=,tpgid=,stat=,comm="}})
	if err != nil {
		return Process{}, fmt.Errorf("ps -p %d: %w", pid, err)
	}
	procs := parsePS(out.Stdout)
	if len(procs) != 1 {
		return Process{}, fmt.Errorf("ps -p %d: no such process", pid)
	}
	return procs[0], nil
}

func (p PS) Children(ctx context.Context, pid int) ([]int, error) {
	out, err := p.Runner.Run(ctx, backends.Cmd{Path: "ps", Args: []string{"--ppid", strconv.Itoa(pid), "-o", "pid="}})
	if err != nil && out.ExitCode != 1 {
		return nil, fmt.Errorf("ps --ppid %d: %w", pid, err)
	}
	var kids []int
	for _, f := range strings.Fields(string(out.Stdout)) {
		if n, err := strconv.Atoi(f); err == nil {
			kids = append(kids, n)
		}
	}
	return kids, nil
}

func parsePS(data []byte) []Process {
	var procs []Process
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		pgid, err2 := strconv.Atoi(f[1])
		tpgid, err3 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		procs = append(procs, Process{PID: pid, PGID: pgid, TPGID: tpgid, State: f[3][0], Comm: strings.Join(f[4:], " ")})
	}
	return procs
}

// AgentPlace is where a live agent process keeps its own record: the HOME
// it was started with and the directory it runs in.
type AgentPlace struct {
	Home string
	Dir  string
}

// ReadAgentPlace reads pid's HOME from its environment and its working
// directory from /proc. An agent's HOME is its own (a pane's shell may set
// another than the caller's), and it reads the directory it runs in
// physically, so both come from the process rather than from the caller.
func ReadAgentPlace(root string, pid int) (AgentPlace, error) {
	if pid <= 0 {
		return AgentPlace{}, fmt.Errorf("no agent process")
	}
	base := filepath.Join(root, strconv.Itoa(pid))
	env, err := os.ReadFile(filepath.Join(base, "environ"))
	if err != nil {
		return AgentPlace{}, fmt.Errorf("read agent %d environment: %w", pid, err)
	}
	var place AgentPlace
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("HOME=")); ok {
			place.Home = string(v)
		}
	}
	if place.Home == "" {
		return AgentPlace{}, fmt.Errorf("agent %d has no HOME", pid)
	}
	if place.Dir, err = os.Readlink(filepath.Join(base, "cwd")); err != nil {
		return AgentPlace{}, fmt.Errorf("read agent %d directory: %w", pid, err)
	}
	return place, nil
}
