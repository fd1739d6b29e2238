package cli

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// IsTerminal reports whether w is a terminal, where colour and live progress
// help a human; pipes and files get plain, stable lines.
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Waiting shows, on a terminal only, what a wait is for and how long is
// left, redrawn in place. The returned func clears the line.
func (p Printer) Waiting(what string, deadline time.Time) func() {
	if !p.TTY || p.JSON {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			left := time.Until(deadline).Round(time.Second)
			if left < 0 {
				left = 0
			}
			fmt.Fprintf(p.Err, "\r\x1b[2K\x1b[2m%s (%s left)\x1b[0m", what, left)
			select {
			case <-done:
				fmt.Fprint(p.Err, "\r\x1b[2K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
