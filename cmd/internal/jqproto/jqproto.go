// Package jqproto is how a binary's --jq talks to fm-jq, the program that
// holds the jq implementation (gojq). The binaries agents call in loops
// (fm-send, fm-control) would otherwise pay its start-up on every run,
// --jq or not: about 0.5 ms of a 3 ms tmux call (docs/performance.md).
//
// fm-jq --frames reads frames on its stdin, each a line "<bytes>" and that
// many bytes: first the expression, then one JSON value a frame. It
// answers each: a header line "<output bytes> <error bytes>", then the
// filter's output (each result on a line, a string raw) and the error's
// text, empty for none; the expression's answer has no output, and an
// error there (it does not compile) ends fm-jq. Lengths, not delimiters,
// frame both ways: an expression may span lines, and a string result may
// hold any byte.
package jqproto

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Program is fm-jq's name: it is installed beside the other binaries.
const Program = "fm-jq"

// FramesFlag makes fm-jq speak this protocol rather than filter its stdin
// as jq does.
const FramesFlag = "--frames"

// RunLimit bounds one value's filtering in fm-jq (a filter may loop
// forever: `repeat(1)`), MaxOutput what it may print for one value, and
// MaxInput one frame.
const (
	RunLimit  = 10 * time.Second
	MaxOutput = 64 << 20
	MaxInput  = 64 << 20
)

// WriteFrame writes one frame: the expression, or one JSON value.
func WriteFrame(w io.Writer, data []byte) error {
	if _, err := fmt.Fprintf(w, "%d\n", len(data)); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// ReadFrame reads one frame; at the end of the stream it returns io.EOF.
func ReadFrame(r *bufio.Reader) ([]byte, error) {
	header, err := r.ReadString('\n')
	if err == io.EOF && header == "" {
		return nil, io.EOF
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // a header cut short is no end
	}
	if err != nil {
		return nil, fmt.Errorf("read a frame's header: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(header, "\n"))
	if err != nil || n < 0 || n > MaxInput {
		return nil, fmt.Errorf("a frame's header reads %q, not a length of at most %d", header, MaxInput)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("read a frame of %d bytes: %w", n, err)
	}
	return data, nil
}

// WriteAnswer writes one answer: the output and the error's text (empty
// for none).
func WriteAnswer(w io.Writer, out []byte, errText string) error {
	if _, err := fmt.Fprintf(w, "%d %d\n", len(out), len(errText)); err != nil {
		return err
	}
	if _, err := w.Write(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, errText)
	return err
}

// ReadAnswer reads one answer; a header that is not two lengths within
// MaxOutput is an error, so a broken peer cannot make the reader allocate
// without bound.
func ReadAnswer(r *bufio.Reader) (out []byte, errText string, err error) {
	header, err := r.ReadString('\n')
	if err != nil {
		return nil, "", fmt.Errorf("read an answer's header: %w", err)
	}
	outLen, errLen, ok := parseHeader(strings.TrimSuffix(header, "\n"))
	if !ok {
		return nil, "", fmt.Errorf("an answer's header reads %q, not two lengths", header)
	}
	body := make([]byte, outLen+errLen)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, "", fmt.Errorf("read an answer of %d bytes: %w", len(body), err)
	}
	return body[:outLen], string(body[outLen:]), nil
}

func parseHeader(h string) (outLen, errLen int, ok bool) {
	a, b, found := strings.Cut(h, " ")
	if !found {
		return 0, 0, false
	}
	outLen, err1 := strconv.Atoi(a)
	errLen, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || outLen < 0 || errLen < 0 || outLen > MaxOutput || errLen > MaxOutput {
		return 0, 0, false
	}
	return outLen, errLen, true
}
