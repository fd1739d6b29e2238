package cli

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/jqproto"
	"fmctl/phrase"
)

// jqFilter is a running fm-jq that compiled the --jq expression and
// filters each outcome sent to it (package jqproto says why it is a
// program of its own).
type jqFilter struct {
	path string
	proc *os.Process
	in   *os.File // its stdin
	out  *os.File // its stdout
	rd   *bufio.Reader
	// broken is set once the filter failed: a later outcome is not sent.
	broken error
}

// answerSlack is what an answer may take beyond fm-jq's own bound on one
// value: its start, or a loaded machine.
const answerSlack = 5 * time.Second

// Start hands the --jq expression to fm-jq, which compiles it: a bad one is
// a usage error found before the verb acts. program is fm-jq's path; empty,
// it is the one beside this binary. Without --jq nothing is started.
func (o *Output) Start(program string) error {
	if o == nil || o.JQ == "" || o.jq != nil {
		return nil
	}
	path, err := jqProgram(program)
	if err != nil {
		return err
	}
	f, err := startJQ(path)
	if err != nil {
		return err
	}
	_, errText, err := f.exchange([]byte(o.JQ), false)
	if err == nil && errText != "" {
		f.close()
		return fault.Usage("--jq '%s' is not a jq expression: %s", phrase.Printable(o.JQ), errText)
	}
	if err != nil {
		f.close()
		return err
	}
	o.jq = f
	return nil
}

// Close ends fm-jq, if Start began one.
func (o *Output) Close() {
	if o != nil && o.jq != nil {
		o.jq.close()
		o.jq = nil
	}
}

// jqProgram is fm-jq's path: program, or the fm-jq beside this binary.
// No other is looked for: a binary filters with the fm-jq it was built and
// installed with.
func jqProgram(program string) (string, error) {
	if program == "" {
		self, err := os.Executable()
		if err != nil {
			return "", jqMissing(jqproto.Program, err)
		}
		program = filepath.Join(filepath.Dir(self), jqproto.Program)
	}
	if info, err := os.Stat(program); err != nil || !info.Mode().IsRegular() {
		if err == nil {
			err = errors.New("not a regular file")
		}
		return "", jqMissing(program, err)
	}
	return program, nil
}

func jqMissing(path string, err error) error {
	return fault.Failed("--jq filters with %s, and %s cannot be run (%v); nothing was done", jqproto.Program, path, err).Coded(fault.EFilterUnavailable).
		Hint("make build (or make install) builds %s beside the other binaries; install it where they are", jqproto.Program).
		Hint("or filter the --json outcome with a jq of your own: ... --json | jq EXPR")
}

func startJQ(path string) (*jqFilter, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, jqBroken(path, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, jqBroken(path, err)
	}
	// The expression is not on fm-jq's command line: it is the first
	// frame, so a word like "--help" stays an expression. fm-jq runs in a
	// process group of its own: a Ctrl-C at the terminal ends the binary,
	// which then ends fm-jq by closing its stdin, and not fm-jq under a
	// watch still printing through it.
	attr := &os.ProcAttr{Files: []*os.File{inR, outW, os.Stderr}, Sys: ownProcessGroup()}
	proc, err := os.StartProcess(path, []string{jqproto.Program, jqproto.FramesFlag}, attr)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, jqMissing(path, err)
	}
	return &jqFilter{path: path, proc: proc, in: inW, out: outR, rd: bufio.NewReader(outR)}, nil
}

// filter sends one outcome (a line of JSON) and returns what the filter
// printed for it and the jq error that ended it, if any.
func (f *jqFilter) filter(raw []byte) ([]byte, string, error) {
	return f.exchange(raw, true)
}

// exchange sends one frame and reads its answer, each way bounded.
func (f *jqFilter) exchange(frame []byte, value bool) ([]byte, string, error) {
	if f.broken != nil {
		return nil, "", f.broken
	}
	deadline := time.Now().Add(jqproto.RunLimit + answerSlack)
	_ = f.in.SetWriteDeadline(deadline)
	_ = f.out.SetReadDeadline(deadline)
	err := jqproto.WriteFrame(f.in, frame)
	var out []byte
	var errText string
	if err == nil {
		out, errText, err = jqproto.ReadAnswer(f.rd)
	}
	if err != nil {
		f.broken = jqBroken(f.path, err)
		if value {
			f.broken = fault.Failed("--jq: %s stopped answering (%v); the outcome was not printed", jqproto.Program, err).Coded(fault.EFilterUnavailable)
		}
		return nil, "", f.broken
	}
	return out, errText, nil
}

func jqBroken(path string, err error) error {
	return fault.Failed("--jq: %s did not answer (%v); nothing was done", path, err).Coded(fault.EFilterUnavailable)
}

// close ends fm-jq: its stdin closed, it exits; one that does not within
// a moment is killed.
func (f *jqFilter) close() {
	f.in.Close()
	_ = f.out.SetReadDeadline(time.Now().Add(2 * time.Second))
	// Its stdout ends as it exits; a read that meets the deadline instead
	// is an fm-jq that did not.
	if _, err := io.Copy(io.Discard, f.rd); err != nil {
		_ = f.proc.Kill()
	}
	f.out.Close()
	_, _ = f.proc.Wait()
}
