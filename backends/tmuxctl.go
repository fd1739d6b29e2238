package backends

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// tmuxControl is one tmux control-mode client (`tmux -C attach-session`)
// that carries every command of an invocation, so an operation of three
// commands starts one tmux process instead of three. Each command is one
// line on its standard input; its answer is the %begin ... %end (or %error)
// block tmux prints for a command from this client (flags 1). Notifications
// between blocks are skipped; pane output is never sent (no-output).
type tmuxControl struct {
	mu      sync.Mutex
	proc    *Started
	lines   chan string // the client's output, closed at its end
	program string      // trace name of one exchange, "tmux -C"
	prefix  []string    // the server options (-L/-S) for traced argv
	dead    bool        // the client ended; nothing more goes through it
	// refused: the client ended after tmux refused its attach (an
	// %error block of its own, flags 0), so no command of ours ran.
	refused bool
	// spoke: the client printed something. One that ends silent was no
	// control client (a tmux too old for the attach flags, a fake) and
	// ran nothing either.
	spoke bool
}

// errControlGone is a command that never reached a control client that had
// ended, so it is safe to run as a process of its own instead.
var errControlGone = errors.New("the tmux control client has ended")

// startControl attaches a control client to session. It attaches with
// -E (the session's environment is not updated from fmctl's), and flags
// ignore-size (it never resizes a window) and no-output (no pane output
// reaches it); -u keeps captured text UTF-8 whatever fmctl's locale.
func startControl(s Starter, binary string, server []string, session string) (*tmuxControl, error) {
	args := append(append([]string(nil), server...), "-C", "attach-session", "-E", "-f", "ignore-size,no-output", "-t", "="+session)
	p, err := s.Start(Cmd{Path: binary, Args: args})
	if err != nil {
		return nil, err
	}
	c := &tmuxControl{proc: p, lines: make(chan string, 64), program: binary + " -C", prefix: server}
	go c.read(bufio.NewReaderSize(p.Stdout, 64<<10))
	return c, nil
}

func (c *tmuxControl) read(r *bufio.Reader) {
	defer close(c.lines)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			c.lines <- strings.TrimSuffix(line, "\n")
		}
		if err != nil {
			return
		}
	}
}

// close ends the client.
func (c *tmuxControl) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.end()
}

// run sends args, one tmux command list in argv form (';' words separate
// commands, a trailing '\;' is a literal ';', as escapeTmuxArg writes it),
// one command at a time, and returns their output concatenated as the tmux
// process would print it. Like a command list, it stops at the first
// command that fails. errControlGone means nothing was sent.
func (c *tmuxControl) run(ctx context.Context, args []string) (Output, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return Output{}, errControlGone
	}
	var out Output
	for i, cmd := range splitCommands(args) {
		text, err := c.exchange(ctx, cmd)
		out.Stdout = append(out.Stdout, text...)
		if err != nil {
			if i > 0 && errors.Is(err, errControlGone) {
				err = fmt.Errorf("the tmux control client ended after %d of the commands ran", i)
			}
			return out, err
		}
	}
	return out, nil
}

// exchange sends one command and reads its answer block.
func (c *tmuxControl) exchange(ctx context.Context, cmd []string) ([]byte, error) {
	start := time.Now()
	traced := Cmd{Path: c.program, Args: append(append([]string(nil), c.prefix...), cmd...)}
	if c.proc.Trace != nil {
		defer func() { c.proc.Trace(traced.Path, traced.Args, time.Since(start)) }()
	}
	if _, err := c.proc.Stdin.Write([]byte(quoteCommand(cmd) + "\n")); err != nil {
		// The client ended before it read the command: nothing ran.
		c.end()
		return nil, errControlGone
	}
	var timeout <-chan time.Time
	if c.proc.Timeout > 0 {
		t := time.NewTimer(c.proc.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var body []string
	var begin []string // the open block's %begin fields, nil outside one
	for {
		var line string
		var ok bool
		select {
		case line, ok = <-c.lines:
		case <-timeout:
			c.end()
			te := &TimeoutError{Call: callName(Cmd{Path: "tmux", Args: cmd}), After: c.proc.Timeout}
			return nil, &RunError{Cmd: traced, ExitCode: -1, Err: te}
		case <-ctx.Done():
			c.end()
			return nil, &RunError{Cmd: traced, ExitCode: -1, Err: ctx.Err()}
		}
		if !ok {
			c.end()
			if c.refused || !c.spoke {
				return nil, errControlGone
			}
			return nil, &RunError{Cmd: traced, ExitCode: -1, Err: errors.New("the tmux control client ended before it answered")}
		}
		c.spoke = true
		if begin == nil {
			if f := strings.Fields(line); len(f) == 4 && f[0] == "%begin" {
				begin, body = f, nil
			}
			continue // a notification
		}
		f := strings.Fields(line)
		if len(f) != 4 || (f[0] != "%end" && f[0] != "%error") || f[1] != begin[1] || f[2] != begin[2] {
			body = append(body, line)
			continue
		}
		mine := begin[3] == "1"
		begin = nil
		switch {
		case !mine && f[0] == "%error":
			c.refused = true
		case !mine:
		case f[0] == "%error":
			msg := strings.Join(body, "\n")
			return nil, &RunError{Cmd: traced, ExitCode: 1, Stderr: msg, Err: errors.New(msg)}
		default:
			var text []byte
			for _, l := range body {
				text = append(append(text, l...), '\n')
			}
			return text, nil
		}
	}
}

// end marks the client ended and reaps it; the caller holds c.mu.
func (c *tmuxControl) end() {
	c.dead = true
	c.proc.Stop()
}

// splitCommands splits an argv-form command list at its ';' words and
// undoes escapeTmuxArg, since a quoted word needs no escape.
func splitCommands(args []string) [][]string {
	var cmds [][]string
	var cur []string
	for _, a := range args {
		if a == ";" {
			cmds = append(cmds, cur)
			cur = nil
			continue
		}
		if strings.HasSuffix(a, `\;`) {
			a = a[:len(a)-2] + ";"
		}
		cur = append(cur, a)
	}
	return append(cmds, cur)
}

// quoteCommand writes a command for tmux's command parser: every word in
// single quotes, inside which nothing is special ('$', '#{', '~', ';'), and
// a single quote itself as "'" between quoted parts, which tmux joins into
// one word as a shell would.
func quoteCommand(cmd []string) string {
	words := make([]string, len(cmd))
	for i, w := range cmd {
		words[i] = "'" + strings.ReplaceAll(w, "'", `'"'"'`) + "'"
	}
	return strings.Join(words, " ")
}
