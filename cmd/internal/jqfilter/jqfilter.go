// Package jqfilter is fm-jq: the jq implementation (gojq) behind the --jq
// of fm-send, fm-control, fm-spawn and fm-teardown, which run it as a
// program of its own (package jqproto says why and how), and, run by hand,
// a jq for the JSON values on its stdin.
package jqfilter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/itchyny/gojq"
	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/jqproto"
	"fmctl/phrase"
)

// App builds the fm-jq command line; in is its stdin.
func App(d cli.IO, in io.Reader) *ucli.Command {
	app := &ucli.Command{
		Name:      jqproto.Program,
		Usage:     "filter JSON values through a jq expression, as every fmctl binary's --jq does",
		UsageText: "fm-jq EXPR < values.json",
		Description: `The jq implementation (gojq) behind the --jq flag of fm-send, fm-control,
fm-spawn and fm-teardown. They run fm-jq from their own directory when
--jq is given, so it must be installed beside them (make build and make
install do); the binaries agents call in loops then do not load a jq
implementation on every run. By hand it filters each JSON value on stdin
and prints each result on a line, a string as raw text.

Examples:
   fm-control list --json | fm-jq '.tasks[].id'
   fm-control list --jq '.tasks[].id'          # the same, in one step`,
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "frames", Hidden: true, Usage: "answer in jqproto's frames, for a binary's --jq"},
		},
		Action: func(_ context.Context, cmd *ucli.Command) error {
			if cmd.Bool("frames") {
				return serve(in, d.Stdout)
			}
			if cmd.NArg() == 0 {
				return cli.HelpForMissing(cmd, "fm-jq needs a jq expression: fm-jq EXPR")
			}
			if cmd.NArg() > 1 {
				return fault.Usage("unexpected argument '%s': fm-jq takes one jq expression (quote it)", phrase.Printable(cmd.Args().Get(1)))
			}
			code, errText := compile(cmd.Args().First())
			if errText != "" {
				return fault.Usage("'%s' is not a jq expression: %s", phrase.Printable(cmd.Args().First()), errText)
			}
			return filterStream(code, in, d.Stdout)
		},
	}
	cli.Conventions(app, d)
	return app
}

// Main runs fm-jq with the process's real edges.
func Main(args []string) int {
	d := cli.IO{Env: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr, Output: &cli.Output{}}
	return cli.Run(App(d, os.Stdin), args, d)
}

// compile parses and compiles expr; a bad one is its error's text.
func compile(expr string) (*gojq.Code, string) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, err.Error()
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, err.Error()
	}
	return code, ""
}

// serve answers jqproto's frames on in: the expression's (its compile
// error, if any), then each value's, until in ends.
func serve(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriter(out)
	expr, err := jqproto.ReadFrame(r)
	if err != nil {
		return fmt.Errorf("read the expression: %w", err)
	}
	code, compileErr := compile(string(expr))
	if err := answer(w, nil, compileErr); err != nil || compileErr != "" {
		return err
	}
	for {
		value, err := jqproto.ReadFrame(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read a value to filter: %w", err)
		}
		res, errText := filter(code, value)
		if err := answer(w, res, errText); err != nil {
			return err
		}
	}
}

func answer(w *bufio.Writer, out []byte, errText string) error {
	if err := jqproto.WriteAnswer(w, out, errText); err != nil {
		return err
	}
	return w.Flush()
}

// filterStream filters each JSON value of in to out, stopping at the first
// error.
func filterStream(code *gojq.Code, in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(in))
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fault.Failed("the input is not JSON: %v", err).Hint("fm-jq reads JSON values, such as fm-control list --json prints")
		}
		res, errText := run(context.Background(), code, v)
		if _, err := out.Write(res); err != nil {
			return err
		}
		if errText != "" {
			return fault.Usage("%s", errText)
		}
	}
}

// filter runs the filter on one JSON value.
func filter(code *gojq.Code, raw []byte) ([]byte, string) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Sprintf("the value to filter is not JSON: %v", err)
	}
	return run(context.Background(), code, v)
}

// run is each result of the filter on v on a line, a string as raw text
// (as gh's --jq and jq -r print), and the error that ended it, if one did.
// A filter may loop or print without end: it is stopped at RunLimit or
// MaxOutput.
func run(ctx context.Context, code *gojq.Code, v any) ([]byte, string) {
	ctx, cancel := context.WithTimeout(ctx, jqproto.RunLimit)
	defer cancel()
	var buf bytes.Buffer
	iter := code.RunWithContext(ctx, v)
	for {
		r, ok := iter.Next()
		if !ok {
			return buf.Bytes(), ""
		}
		if err, isErr := r.(error); isErr {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return buf.Bytes(), fmt.Sprintf("the filter did not finish within %s", jqproto.RunLimit)
			}
			return buf.Bytes(), err.Error()
		}
		if s, isStr := r.(string); isStr {
			buf.WriteString(s)
		} else if b, err := cli.MarshalValue(r); err != nil {
			return buf.Bytes(), err.Error()
		} else {
			buf.Write(b)
		}
		buf.WriteByte('\n')
		if buf.Len() > jqproto.MaxOutput {
			return nil, fmt.Sprintf("the filter printed more than %d MiB for one value", jqproto.MaxOutput>>20)
		}
	}
}
