package tmux

import (
	"context"
	"errors"
	"fmt"
	"time"

	"fmctl/backends"
	"fmctl/backends/tmux/wire"
)

// Carrier runs one tmux invocation without a tmux client process
// (wire.Wire): args as the client takes them, env its whole
// environment, stdin what a `load-buffer -` reads. wire.ErrNotSent is a
// call it did not carry, which a tmux client then runs.
type Carrier interface {
	Run(ctx context.Context, args, env []string, stdin []byte) (wire.Result, error)
}

// WireRunner is the Runner that offers every call of Binary to Carrier (the
// wire, docs/backends/tmux.md) and runs the rest, and every call the
// carrier did not send, through Exec. A call that fails after its command
// was sent is never run again: the command may have run.
type WireRunner struct {
	Exec    backends.Runner
	Binary  string // the tmux program a Cmd names ("tmux")
	Carrier Carrier
	// TracePath, when set, gets one line per call carried, named
	// wireTraceName, beside the exec runner's lines.
	TracePath string
}

// wireTraceName is how a carried call is named in a runner trace.
const wireTraceName = "tmux (wire)"

func (w *WireRunner) Run(ctx context.Context, c backends.Cmd) (backends.Output, error) {
	if c.Path != w.Binary {
		return w.Exec.Run(ctx, c)
	}
	start := time.Now()
	res, err := w.Carrier.Run(ctx, c.Args, c.Environ(), c.Stdin)
	if errors.Is(err, wire.ErrNotSent) {
		return w.Exec.Run(ctx, c)
	}
	if w.TracePath != "" {
		backends.AppendTrace(w.TracePath, backends.Cmd{Path: wireTraceName, Args: c.Args}, time.Since(start))
	}
	out := backends.Output{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return out, &backends.RunError{Cmd: c, ExitCode: -1, Stderr: string(out.Stderr), Err: err}
	}
	if out.ExitCode != 0 {
		return out, &backends.RunError{Cmd: c, ExitCode: out.ExitCode, Stderr: string(out.Stderr), Err: fmt.Errorf("exit status %d", out.ExitCode)}
	}
	return out, nil
}
