package control

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"fmctl/cmd/internal/cli"
)

// printTable is list on a terminal: the same facts as the piped lines, in
// aligned columns under a header, for a person. A record that could not be
// used reads "error" in the table, its error on a line below it.
func (c *Controller) printTable(rows []listRow) error {
	w := tabwriter.NewWriter(c.print.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tHARNESS\tKIND\tBACKEND\tENDPOINT\tSTATE\tACTIVITY\tJOURNAL")
	var broken []listRow
	var lost []string // tasks whose multiplexer server is gone
	for _, r := range rows {
		st, act := r.State, r.Activity
		if r.Server == "gone" {
			st = "server-gone"
			lost = append(lost, oneLine(r.ID))
		}
		if r.Attention != "" {
			act += " (" + r.Attention + " " + formatSeconds(r.StalledFor) + ")"
		}
		if r.Error != "" {
			st, act = "error", "-"
			broken = append(broken, r)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", oneLine(r.ID), cell(oneLine(r.Harness)), cell(r.Kind), cell(r.Backend), cell(oneLine(r.Endpoint)), st, act, r.Journal)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, r := range broken {
		fmt.Fprintf(c.print.Out, "%s: error: %s\n", oneLine(r.ID), oneLine(r.Error))
	}
	if len(lost) > 0 {
		// A restart or a reboot leaves every such task at once: the way
		// back is said once, not per row.
		fmt.Fprintf(c.print.Out, "\nserver-gone: %s; bring each back with: fm-spawn <id> --relaunch\n", strings.Join(lost, " "))
		fmt.Fprintf(c.print.Out, "or end one once its work has landed: fm-teardown <id>\n")
	}
	return nil
}

// cell stands "-" for a value the record did not give.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clearScreen moves a terminal's cursor home and clears it, so a watched
// list is redrawn in place.
const clearScreen = "\x1b[H\x1b[2J"

// Watch prints the list, then again each time it changes, until the
// context ends (SIGINT, SIGTERM) or stdout is closed: on a terminal the
// table redrawn in place; piped, the list's stable lines, each change after
// a blank line; with --json one list object a line per change. It polls as
// a long wait does, quickly again after a change. Nothing is locked or
// written.
func (c *Controller) Watch(ctx context.Context) error {
	var last []byte
	var pause *idlePause
	for first := true; ; first = false {
		dir, rows, err := c.listRows(ctx)
		if pause == nil {
			// Every state write renames a file into the state directory,
			// which changes the directory's own time.
			pause = c.idlePause(dir)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		view, err := c.render(dir, rows)
		if err != nil {
			return err
		}
		// How long a stall has lasted grows on every read: a frame is
		// drawn when a stall begins or ends, not for each second of one.
		seen, err := c.render(dir, withoutStallTimes(rows))
		if err != nil {
			return err
		}
		if !bytes.Equal(seen, last) {
			last = seen
			var frame []byte
			switch {
			case c.print.OutTTY && !c.print.JSON:
				frame = append([]byte(clearScreen), view...)
			case !first && !c.print.JSON:
				frame = append([]byte("\n"), view...)
			default:
				frame = view
			}
			if _, err := c.print.Out.Write(frame); err != nil {
				// The reader went away (a closed pipe): the watch is over.
				return nil
			}
			pause.Reset()
		}
		if pause.Sleep(ctx, c.tun.Control.Watch) != nil || cli.ReaderGone(c.print.Out) {
			return nil
		}
	}
}

// render is what printList would print for rows, and the --jq filter's
// error, if it met one.
func (c *Controller) render(dir string, rows []listRow) ([]byte, error) {
	var buf bytes.Buffer
	view := *c
	view.print.Out = &buf
	if err := view.printList(dir, rows); err != nil {
		return nil, err
	}
	return buf.Bytes(), c.print.Output.Err()
}

// withoutStallTimes is rows with how long each stall lasted left out.
func withoutStallTimes(rows []listRow) []listRow {
	out := append([]listRow(nil), rows...)
	for i := range out {
		out[i].StalledFor = 0
	}
	return out
}
