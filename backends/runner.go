package backends

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Cmd is one external program invocation: always an argv, never a shell string.
type Cmd struct {
	Path  string   // program name looked up on PATH, or an absolute path
	Args  []string // arguments after the program name
	Stdin []byte   // optional standard input
	Env   []string // extra KEY=VALUE entries appended to the inherited environment
	Unset []string // variables removed from the inherited environment
}

func (c Cmd) String() string {
	return c.Path + " " + strings.Join(c.Args, " ")
}

// Environ is the whole environment the program runs with: the inherited
// one, without Unset and without the names Env sets, with Env appended. A
// name is never there twice: a C program's getenv takes the first.
func (c Cmd) Environ() []string {
	drop := append([]string{}, c.Unset...)
	for _, kv := range c.Env {
		name, _, _ := strings.Cut(kv, "=")
		drop = append(drop, name)
	}
	return append(without(os.Environ(), drop), c.Env...)
}

// Output is what a finished program printed.
type Output struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// RunError reports a program that could not start or exited non-zero.
type RunError struct {
	Cmd      Cmd
	ExitCode int // -1 when the program did not start
	Stderr   string
	Err      error
}

func (e *RunError) Error() string {
	var te *TimeoutError
	if errors.As(e.Err, &te) {
		return te.Error()
	}
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.ExitCode < 0 {
		return fmt.Sprintf("%s could not run: %s", e.Cmd.Path, msg)
	}
	return fmt.Sprintf("%s %s exited %d: %s", e.Cmd.Path, firstArg(e.Cmd.Args), e.ExitCode, msg)
}

func (e *RunError) Unwrap() error { return e.Err }

func firstArg(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// StderrOf returns the captured stderr of a failed run, or the error text.
func StderrOf(err error) string {
	var re *RunError
	if errors.As(err, &re) {
		if s := strings.TrimSpace(re.Stderr); s != "" {
			return s
		}
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// Runner runs external programs. Every backend call goes through one, so tests
// can fake the multiplexer and benchmarks can count its invocations.
type Runner interface {
	Run(ctx context.Context, c Cmd) (Output, error)
}

// ExecRunner runs programs as child processes. When TracePath is set,
// every invocation is appended there as one line (elapsed time and argv),
// which is how benchmarks count the child processes a binary spawned.
type ExecRunner struct {
	TracePath string

	mu      sync.Mutex
	paths   map[string]string // program name -> its path on PATH
	pathVar string            // the PATH paths were found on
}

// NewExecRunner returns the production runner; tracePath (FM_RUNNER_TRACE)
// names an optional trace file.
func NewExecRunner(tracePath string) *ExecRunner {
	return &ExecRunner{TracePath: tracePath}
}

func (r *ExecRunner) Run(ctx context.Context, c Cmd) (Output, error) {
	start := time.Now()
	out, err := r.run(ctx, c)
	if r.TracePath != "" {
		r.trace(c, time.Since(start))
	}
	if err == nil {
		return out, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		out.ExitCode = ee.ExitCode()
	} else {
		out.ExitCode = -1
	}
	return out, &RunError{Cmd: c, ExitCode: out.ExitCode, Stderr: string(out.Stderr), Err: err}
}

func (r *ExecRunner) run(ctx context.Context, c Cmd) (Output, error) {
	path, err := r.lookPath(c.Path)
	if err != nil {
		return Output{}, err
	}
	named := c.Path
	c.Path = path
	cmd := c.Command(ctx)
	cmd.Args[0] = named
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	out := Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if err != nil && ctx.Err() != nil {
		// Killed for the context: the signal that ended it is not the
		// program's own failure.
		return out, ctx.Err()
	}
	return out, err
}

// waitDelay is how long a call's output is still read after its program
// exited or its process group was killed: a child that escaped the group
// (a daemon a wrapper started with setsid) and holds the pipes cannot keep
// the call open longer.
const waitDelay = time.Second

// Command is c as an exec.Cmd, for a caller that streams or holds the
// process (an ssh session, a serve's verb); ExecRunner runs every other
// call through it. The program runs in its own process group, and a
// cancelled or timed out call kills the whole group: a wrapper script's
// child (a hung tmux behind a shim) would otherwise keep the output pipes
// open.
func (c Cmd) Command(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The group's id is the leader's pid, surely the call's own only
		// while the leader is unreaped: Signal says ErrProcessDone after.
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
			return err
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = waitDelay
	if len(c.Env) > 0 || len(c.Unset) > 0 {
		cmd.Env = c.Environ()
	}
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	return cmd
}

// lookPath resolves a program name on PATH once per runner: a verb that
// calls tmux several times searches PATH once.
func (r *ExecRunner) lookPath(name string) (string, error) {
	pathVar := os.Getenv("PATH")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.paths == nil || r.pathVar != pathVar {
		r.paths, r.pathVar = map[string]string{}, pathVar
	}
	if p, ok := r.paths[name]; ok {
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	r.paths[name] = p
	return p, nil
}

func without(env, names []string) []string {
	if len(names) == 0 {
		return env
	}
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			if n == name {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

func (r *ExecRunner) trace(c Cmd, d time.Duration) { appendTrace(r.TracePath, c, d) }

// appendTrace appends one call to the trace at path: elapsed microseconds,
// the program and its argv, tab-separated.
func appendTrace(path string, c Cmd, d time.Duration) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%d\t%s\t%q\n", d.Microseconds(), c.Path, c.Args)
}

// CountingRunner wraps a Runner and counts invocations per program.
type CountingRunner struct {
	Inner Runner
	mu    sync.Mutex
	calls map[string]int
	log   []Cmd
}

func (r *CountingRunner) Run(ctx context.Context, c Cmd) (Output, error) {
	r.mu.Lock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[c.Path]++
	r.log = append(r.log, c)
	r.mu.Unlock()
	return r.Inner.Run(ctx, c)
}

// Calls returns how many times the named program was run.
func (r *CountingRunner) Calls(program string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[program]
}

// Log returns every command run so far.
func (r *CountingRunner) Log() []Cmd {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Cmd(nil), r.log...)
}

// Reset forgets the counts.
func (r *CountingRunner) Reset() {
	r.mu.Lock()
	r.calls = nil
	r.log = nil
	r.mu.Unlock()
}

// Sleep waits d or until ctx is done, whichever comes first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// MinPoll is where every poll starts: a fast agent's answer is seen within
// about 10 ms, and a slow one costs a few reads before the interval reaches
// its cap.
const MinPoll = 10 * time.Millisecond

// Backoff is a poll interval that starts at MinPoll and doubles up to Max,
// so a wait costs little when its condition holds at once and few reads when
// it takes seconds.
type Backoff struct {
	Max  time.Duration // the interval's cap; <= MinPoll polls at Max throughout
	next time.Duration
}

// Sleep waits the current interval (or until ctx is done) and doubles the next.
func (b *Backoff) Sleep(ctx context.Context) error { return Sleep(ctx, b.Next()) }

// Next returns the current interval and advances to the next, for a caller
// that clamps the pause to its own deadline.
func (b *Backoff) Next() time.Duration {
	d := b.next
	if d == 0 {
		d = min(MinPoll, b.Max)
	}
	if d <= 0 {
		d = MinPoll
	}
	b.next = min(2*d, max(b.Max, d))
	return d
}

// TimeoutError is a call that did not finish within its bound.
type TimeoutError struct {
	Call  string // the program and its subcommand, "tmux list-windows"
	After time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s timed out after %s", e.Call, e.After)
}

// MayHaveRun returns the timeout of a call that failed by timing out: the
// multiplexer can carry out a key before the timeout ends its client, so a
// key or Enter behind it is unconfirmed, never "not sent".
func MayHaveRun(err error) (*TimeoutError, bool) {
	var te *TimeoutError
	return te, errors.As(err, &te)
}

// Bounded runs every call under a timeout, so a multiplexer that never
// answers ends the call (its process group killed by the runner) instead of
// hanging a verb that holds the task's locks.
type Bounded struct {
	Inner   Runner
	Timeout time.Duration
}

func (b Bounded) Run(ctx context.Context, c Cmd) (Output, error) {
	if b.Timeout <= 0 {
		return b.Inner.Run(ctx, c)
	}
	tctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	out, err := b.Inner.Run(tctx, c)
	if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		te := &TimeoutError{Call: callName(c), After: b.Timeout}
		return out, &RunError{Cmd: c, ExitCode: -1, Stderr: string(out.Stderr), Err: te}
	}
	return out, err
}

// callName is the program and its subcommand, past the server-selection
// options (tmux -L/-S/-f, zellij --session S): "tmux list-windows",
// "zellij action dump-screen".
func callName(c Cmd) string {
	args := c.Args
	for len(args) > 1 {
		switch args[0] {
		case "-L", "-S", "-f", "--session":
			args = args[2:]
			continue
		case "-u":
			args = args[1:]
			continue
		}
		break
	}
	name := filepath.Base(c.Path)
	if len(args) == 0 {
		return name
	}
	name += " " + args[0]
	if args[0] == "action" && len(args) > 1 {
		name += " " + args[1]
	}
	return name
}
