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
	var ee *exitError
	if errors.As(err, &ee) {
		out.ExitCode = ee.code()
	} else {
		out.ExitCode = -1
	}
	return out, &RunError{Cmd: c, ExitCode: out.ExitCode, Stderr: string(out.Stderr), Err: err}
}

// exitError is a program that did not exit 0: its wait status says how it
// ended.
type exitError struct{ status syscall.WaitStatus }

func (e *exitError) Error() string {
	if e.status.Signaled() {
		return "signal: " + e.status.Signal().String()
	}
	return fmt.Sprintf("exit status %d", e.status.ExitStatus())
}

// code is the exit code, or -1 for a program a signal ended (as os/exec's
// ExitCode).
func (e *exitError) code() int {
	if e.status.Exited() {
		return e.status.ExitStatus()
	}
	return -1
}

// waitDelay is how long a call's output is still read after its program
// exited or its process group was killed: a child that escaped the group
// (and holds the pipes) cannot keep the call open longer.
const waitDelay = time.Second

// run forks and execs the program itself (syscall.ForkExec): os/exec
// spent about 0.3 ms more of an 8 ms verb on one tmux call (a goroutine per
// stream, one watching the context, a PATH search per call), and
// os.StartProcess starts a throwaway child once per process to probe for
// pidfds (about 0.1 ms in a profile of 120 interrupts). The program's
// stdout is read here, its stderr by one goroutine, its stdin (when given)
// written by another, and one waits for its exit. It runs in its own
// process group, and a cancelled or timed out call kills the whole group:
// a wrapper script's child (a hung tmux behind a shim) would otherwise
// keep the output pipes open. The group is killed only while its leader
// is unreaped (awaitExit), so its id cannot have passed to another
// process.
func (r *ExecRunner) run(ctx context.Context, c Cmd) (Output, error) {
	if err := ctx.Err(); err != nil {
		return Output{}, err
	}
	path, err := r.lookPath(c.Path)
	if err != nil {
		return Output{}, err
	}
	stdin, feed, err := stdinFor(c.Stdin)
	if err != nil {
		return Output{}, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return Output{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		stdin.Close()
		outR.Close()
		outW.Close()
		return Output{}, err
	}
	env := os.Environ()
	if len(c.Env) > 0 || len(c.Unset) > 0 {
		env = c.Environ()
	}
	// Fd puts each descriptor the child gets in blocking mode, as a
	// program expects of its standard streams.
	attr := &syscall.ProcAttr{Env: env, Files: []uintptr{stdin.Fd(), outW.Fd(), errW.Fd()}, Sys: &syscall.SysProcAttr{Setpgid: true}}
	pid, err := syscall.ForkExec(path, append([]string{c.Path}, c.Args...), attr)
	stdin.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		if feed != nil {
			feed.Close()
		}
		return Output{}, &os.PathError{Op: "fork/exec", Path: path, Err: err}
	}
	var reaping sync.Mutex
	exited := false
	stop := context.AfterFunc(ctx, func() {
		reaping.Lock()
		if !exited {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		reaping.Unlock()
		deadline := time.Now().Add(waitDelay)
		_ = outR.SetReadDeadline(deadline)
		_ = errR.SetReadDeadline(deadline)
		if feed != nil {
			_ = feed.SetWriteDeadline(deadline)
		}
	})
	var stderr bytes.Buffer
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		_, _ = stderr.ReadFrom(errR)
	}()
	if feed != nil {
		go func() {
			_, _ = feed.Write(c.Stdin)
			feed.Close()
		}()
	}
	// Once the program has exited, its output is read for at most
	// waitDelay more: a child it left behind holding the pipes (it escaped
	// the group) does not hold the call.
	exitedCh := make(chan struct{})
	go func() {
		defer close(exitedCh)
		if !awaitExit(pid) {
			return
		}
		reaping.Lock()
		exited = true
		reaping.Unlock()
		deadline := time.Now().Add(waitDelay)
		_ = outR.SetReadDeadline(deadline)
		_ = errR.SetReadDeadline(deadline)
	}()
	var stdout bytes.Buffer
	_, readErr := stdout.ReadFrom(outR)
	<-errDone
	<-exitedCh
	reaping.Lock()
	exited = true // the pid is reaped next: no kill from here on
	reaping.Unlock()
	status, waitErr := reap(pid)
	killed := !stop()
	outR.Close()
	errR.Close()
	out := Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	ok := status.Exited() && status.ExitStatus() == 0
	switch {
	case waitErr != nil:
		return out, fmt.Errorf("wait for %s: %w", c.Path, waitErr)
	case ok && readErr == nil:
		return out, nil
	case killed:
		return out, ctx.Err()
	case !ok:
		return out, &exitError{status: status}
	}
	return out, fmt.Errorf("read the output of %s: %w", c.Path, readErr)
}

// reap waits for the program's exit and collects its status.
func reap(pid int) (syscall.WaitStatus, error) {
	var status syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &status, 0, nil)
		if !errors.Is(err, syscall.EINTR) {
			return status, err
		}
	}
}

// stdinFor is the program's stdin: /dev/null, or a pipe whose write end
// (feed) the caller writes data into.
func stdinFor(data []byte) (stdin, feed *os.File, err error) {
	if data == nil {
		stdin, err = os.Open(os.DevNull)
		return stdin, nil, err
	}
	return os.Pipe()
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

func (r *ExecRunner) trace(c Cmd, d time.Duration) { AppendTrace(r.TracePath, c, d) }

// AppendTrace appends one call to the trace at path: elapsed microseconds,
// the program and its argv, tab-separated.
func AppendTrace(path string, c Cmd, d time.Duration) {
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
	// A wire call's socket timeout, set to the deadline, can end the call a
	// hair before the context's own timer marks tctx done; both are this
	// bound running out (os.ErrDeadlineExceeded is the socket's word for it).
	timedOut := errors.Is(tctx.Err(), context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
	if err != nil && ctx.Err() == nil && timedOut {
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
