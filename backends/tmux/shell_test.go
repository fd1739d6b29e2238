package tmux

import (
	"context"
	"slices"
	"strings"
	"testing"

	"fmctl/backends"
)

func TestShellCaptureEndsAtTheCursorRow(t *testing.T) {
	cases := []struct {
		name, out, end string
		want           []string
		ok             bool
	}{
		{
			name: "rows below the prompt are not the input line",
			out:  "1 6\nlast output\n$ \n\nTreeSitter client destroyed\n    at destroy (x.js:1:1)\n\n",
			end:  "-", want: []string{"last output", "$"}, ok: true,
		},
		{
			name: "nothing joined, the cursor on the last row",
			out:  "2 3\none\ntwo\n$ typed\n",
			end:  "-", want: []string{"one", "two", "$ typed"}, ok: true,
		},
		{
			name: "rows joined, the cursor on the last row",
			out:  "3 4\nout\n$ echo aaaa bbbb\n\n",
			end:  "-", want: []string{"out", "$ echo aaaa bbbb"}, ok: true,
		},
		{
			name: "rows joined above the cursor: its row is not known",
			out:  "2 5\n$ echo aaaa bbbb\n\ntrace\n\n",
			end:  "-", ok: false,
		},
		{
			name: "the capture ended at the cursor row, a line wrapped at a space joined whole",
			out:  "2 10\nout\n$ echo aaaa bbbb \n",
			end:  "2", want: []string{"out", "$ echo aaaa bbbb"}, ok: true,
		},
		{
			name: "the capture ended where the cursor no longer is",
			out:  "4 10\nout\n$ echo aaaa bbbb\n",
			end:  "2", ok: false,
		},
		{
			name: "a shell that drew nothing yet",
			out:  "0 3\n\n\n\n",
			end:  "-", want: nil, ok: true,
		},
		{
			name: "the cursor on a blank row below the prompt",
			out:  "2 4\n$ \n\n\nstray\n",
			end:  "-", want: []string{"$"}, ok: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseShellCapture([]byte(tc.out))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := c.toCursor(tc.end)
			if ok != tc.ok || !slices.Equal(got, tc.want) {
				t.Fatalf("toCursor(%q) = %q, %v; want %q, %v", tc.end, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestShellCaptureWithoutACursorIsAnError(t *testing.T) {
	for _, out := range []string{"", "\n$ \n", "x 3\n$ \n", "1\n$ \n"} {
		if _, err := parseShellCapture([]byte(out)); err == nil {
			t.Errorf("parseShellCapture(%q) read a cursor", out)
		}
	}
}

// shellScreens answers the list-windows lookup for fm-t1 (%3), and each
// ShellRows read with the next of its captures, logging the -E asked for.
type shellScreens struct {
	captures []string
	ends     []string
}

func (s *shellScreens) Run(_ context.Context, c backends.Cmd) (backends.Output, error) {
	args := subcommand(c)
	if args[0] == "list-windows" {
		return backends.Output{Stdout: []byte(twoWindows)}, nil
	}
	if i := slices.Index(args, "-E"); args[0] == "display-message" && i > 0 && len(s.captures) > 0 {
		s.ends = append(s.ends, args[i+1])
		out := s.captures[0]
		s.captures = s.captures[1:]
		return backends.Output{Stdout: []byte(out)}, nil
	}
	return backends.Output{ExitCode: 1}, &backends.RunError{Cmd: c, ExitCode: 1, Stderr: "unexpected " + strings.Join(args, " ")}
}

func TestShellRowsReadAgainToEndAtTheCursorRow(t *testing.T) {
	joined := "2 6\n$ echo aaaa bbbb\n\ntrace\n\n\n" // rows 0-1 joined, the cursor on row 2
	cases := []struct {
		name     string
		captures []string
		ends     []string
		want     []string
		fails    bool
	}{
		{
			name:     "one read when no row was joined",
			captures: []string{"1 4\n$ echo a\n$ \ntrace\n\n"},
			ends:     []string{"-"}, want: []string{"$ echo a", "$"},
		},
		{
			name:     "a joined screen is read again down to the cursor row",
			captures: []string{joined, "2 6\n$ echo aaaa bbbb\n$ \n"},
			ends:     []string{"-", "2"}, want: []string{"$ echo aaaa bbbb", "$"},
		},
		{
			name:     "a cursor that moved is followed",
			captures: []string{joined, "3 6\n$ echo aaaa bbbb\nout\n", "3 6\n$ echo aaaa bbbb\nout\n$ \n"},
			ends:     []string{"-", "2", "3"}, want: []string{"$ echo aaaa bbbb", "out", "$"},
		},
		{
			name:     "a cursor that never holds still is an error",
			captures: []string{joined, "3 6\nx\n", "4 6\nx\n"},
			ends:     []string{"-", "2", "3"}, fails: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &shellScreens{captures: tc.captures}
			got, err := New(s, Options{Procs: &fixedProcs{}}).ShellRows(context.Background(), t1)
			if (err != nil) != tc.fails || !slices.Equal(got, tc.want) {
				t.Fatalf("ShellRows = %q, %v; want %q (fails=%v)", got, err, tc.want, tc.fails)
			}
			if !slices.Equal(s.ends, tc.ends) {
				t.Fatalf("reads ended at %q, want %q", s.ends, tc.ends)
			}
		})
	}
}
