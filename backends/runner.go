package backends

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
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

// ExecRunner runs programs with os/exec. When TracePath is set, every
// invocation is appended there as one line (elapsed time and argv), which is
// how benchmarks count the child processes a binary spawned.
type ExecRunner struct {
	TracePath string
}

// NewExecRunner returns the production runner; FM_RUNNER_TRACE names an
// optional trace file.
func NewExecRunner() *ExecRunner {
	return &ExecRunner{TracePath: os.Getenv("FM_RUNNER_TRACE")}
}

func (r *ExecRunner) Run(ctx context.Context, c Cmd) (Output, error) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	if len(c.Env) > 0 || len(c.Unset) > 0 {
		cmd.Env = append(without(os.Environ(), c.Unset), c.Env...)
	}
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	out := Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if r.TracePath != "" {
		r.trace(c, time.Since(start))
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			out.ExitCode = ee.ExitCode()
			return out, &RunError{Cmd: c, ExitCode: out.ExitCode, Stderr: stderr.String(), Err: err}
		}
		out.ExitCode = -1
		return out, &RunError{Cmd: c, ExitCode: -1, Stderr: stderr.String(), Err: err}
	}
	return out, nil
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

func (r *ExecRunner) trace(c Cmd, d time.Duration) {
	f, err := os.OpenFile(r.TracePath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
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
