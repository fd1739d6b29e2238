package tmuxfake

import (
	"fmt"
	"os"
	"strings"

	"fmctl/tests/fakeframe"
)

// Control is the `faketmux` test command that arranges the fake's world:
//
//	faketmux window <session:window> [command] [cwd]   create a window
//	faketmux set <session:window> command|cwd|composer <value>
//	faketmux rm <session:window>                        remove a window
//	faketmux show <session:window>                      print its state
//	faketmux submitted <session:window>                 print each submitted line, raw
//	faketmux record <session:window> <text>             write text into its agent's own record
func Control() int {
	args := os.Args[1:]
	if len(args) < 2 {
		return fail("usage: faketmux window|set|rm|show|submitted|record <session:window> ...")
	}
	sess, win, ok := strings.Cut(args[1], ":")
	if !ok {
		return fail("faketmux: %q is not session:window", args[1])
	}
	var out string
	err := withWorld(func(w *World) error {
		s := w.session(sess)
		if args[0] == "window" {
			w.Running = true
			if s == nil {
				s = &Session{Name: sess}
				w.Sessions = append(w.Sessions, s)
			}
			p := w.addPane(s, win, "")
			if len(args) > 2 {
				p.Command = args[2]
			}
			if len(args) > 3 {
				p.Cwd = args[3]
			}
			return nil
		}
		if s == nil {
			return fmt.Errorf("faketmux: no session %s", sess)
		}
		var pane *Pane
		idx := -1
		for i, p := range s.Panes {
			if p.Window == win {
				pane, idx = p, i
			}
		}
		if pane == nil {
			return fmt.Errorf("faketmux: no window %s", args[1])
		}
		switch args[0] {
		case "set":
			if len(args) < 4 {
				return fmt.Errorf("faketmux set needs a field and a value")
			}
			switch args[2] {
			case "command":
				pane.Command, pane.Running = args[3], false
			case "cwd":
				pane.Cwd = args[3]
			case "composer":
				pane.Composer = args[3]
			default:
				return fmt.Errorf("faketmux set: unknown field %s", args[2])
			}
		case "rm":
			s.Panes = append(s.Panes[:idx], s.Panes[idx+1:]...)
		case "show":
			out = fmt.Sprintf("command=%s\ncwd=%s\ncomposer=%s\n", pane.Command, pane.Cwd, pane.Composer)
		case "submitted":
			// Raw bytes, unlike input.log's %q: a test can assert an
			// invisible character (the routing marker's U+2063) byte for byte.
			var b strings.Builder
			for _, line := range pane.Transcript {
				b.WriteString(strings.TrimPrefix(line, "you: ") + "\n")
			}
			out = b.String()
		case "record":
			// A message the agent takes late (a queued one, when its turn
			// ends) reaches its record only now.
			if len(args) < 3 {
				return fmt.Errorf("faketmux record needs a text")
			}
			// It starts a turn, which hangs as a typed prompt's does; the
			// turn is running before the prompt shows, so no reader sees
			// the prompt taken and no turn for it.
			if err := fakeframe.HangTurn(dir(), pane.Command, os.Getenv("HOME"), pane.Cwd); err != nil {
				return err
			}
			return fakeframe.RecordPrompt(pane.Command, os.Getenv("HOME"), pane.Cwd, args[2])
		default:
			return fmt.Errorf("faketmux: unknown action %s", args[0])
		}
		return nil
	})
	os.Stdout.WriteString(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
