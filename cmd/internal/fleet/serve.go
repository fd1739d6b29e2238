// Package fleet is the CLI edge of fmctl across hosts: the hidden
// `fm-control serve` a host runs for another machine, the forwarding of a
// <host>/<id> verb to it, list --all-hosts, and `fm-control hosts`.
package fleet

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"fmctl/backends"
	"fmctl/phrase"
	"fmctl/remote"
	"fmctl/state"
)

// Server runs the requests of one session, in order, each by executing the
// sibling binary it names. A process per verb rather than the binaries'
// Main in this process: a verb keeps its own signal handling, locks and
// exit, a verb that hangs is killed at its deadline without taking the
// session down, and fm-control cannot import fm-send's package anyway.
type Server struct {
	Home    string // FM_HOME for every verb
	BinDir  string // where fm-send, fm-control, fm-spawn and fm-teardown are
	Env     []string
	Version string
	Log     state.RequestLog
}

// maxOutput bounds what one verb may print.
const maxOutput = 8 << 20

// Serve writes the hello, then answers each request line on in until it
// ends.
func (s Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	hello := remote.Hello{Serve: remote.HelloServe, Protocol: remote.Protocol, Version: s.Version, Arch: runtime.GOOS + "/" + runtime.GOARCH}
	if err := enc.Encode(hello); err != nil {
		return fmt.Errorf("write hello: %w", err)
	}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		data, err := remote.ReadLine(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := enc.Encode(s.answer(ctx, data)); err != nil {
			return fmt.Errorf("write answer: %w", err)
		}
	}
}

func refusal(id, format string, args ...any) remote.Response {
	return remote.Response{ID: id, Exit: 1, Refused: true, Stderr: "error: " + fmt.Sprintf(format, args...) + "\n"}
}

// answer runs one request, or answers it from the request log.
func (s Server) answer(ctx context.Context, data []byte) remote.Response {
	var req remote.Request
	if err := json.Unmarshal(data, &req); err != nil {
		return refusal("", "fm-control serve could not read a request: %v", err)
	}
	switch {
	case req.Protocol != remote.Protocol:
		return refusal(req.ID, "this host's fmctl %s speaks protocol %d and the request is protocol %d; nothing was run", s.Version, remote.Protocol, req.Protocol)
	case !state.ValidRequestID(req.ID):
		return refusal(req.ID, "request id '%s' is not 8 to 64 letters, digits, '-' or '_'; nothing was run", phrase.Printable(req.ID))
	case len(req.Argv) == 0:
		// A keeper's ping (protocol.go): answered, nothing run.
		return remote.Response{ID: req.ID}
	case !slices.Contains(remote.Binaries, req.Argv[0]):
		return refusal(req.ID, "fm-control serve runs %s only; nothing was run", strings.Join(remote.Binaries, ", "))
	case req.Argv[0] == "fm-control" && servesItself(req.Argv):
		return refusal(req.ID, "fm-control serve does not run serve or hosts for another machine; nothing was run")
	}
	timeout := time.Duration(req.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = time.Minute
	}
	if !remote.Mutates(req.Argv) {
		return s.run(ctx, req, timeout)
	}
	lock, remembered, err := s.Log.Claim(req.ID, timeout)
	if err != nil {
		return refusal(req.ID, "%v; nothing was run", err)
	}
	defer lock.Release()
	if remembered != nil {
		var rec rememberedRequest
		switch {
		case json.Unmarshal(remembered, &rec) != nil || rec.Response.ID != req.ID:
			return refusal(req.ID, "request %s ran before, and its remembered outcome is unreadable; look at the task before retrying with a new request", req.ID)
		case rec.Digest != requestDigest(req):
			// A reused id (FM_REQUEST_ID left set) must not pass a new
			// command off as done.
			return refusal(req.ID, "request id %s was used before for another command; nothing was run (unset FM_REQUEST_ID to send a new request)", req.ID)
		}
		rec.Response.Replayed = true
		return rec.Response
	}
	resp := s.run(ctx, req, timeout)
	if data, err := json.Marshal(rememberedRequest{Digest: requestDigest(req), Response: resp}); err == nil {
		if err := s.Log.Remember(req.ID, data); err != nil {
			resp.Stderr += fmt.Sprintf("warning: %v: a retry of request %s would run it again\n", err, req.ID)
		}
	}
	return resp
}

// rememberedRequest is what the request log keeps of a mutation: what it
// was, by digest, and its answer.
type rememberedRequest struct {
	Digest   string          `json:"digest"`
	Response remote.Response `json:"response"`
}

// requestDigest identifies what a request asks: its argv, standard input
// and files. The output form (--json) is left out: a retry that asks for
// the other form is the same request, answered in the form it ran in.
func requestDigest(req remote.Request) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	var argv []string
	for i, a := range req.Argv {
		if a == "--" {
			argv = append(argv, req.Argv[i:]...)
			break
		}
		if !strings.HasPrefix(a, "--json=") {
			argv = append(argv, a)
		}
	}
	_ = enc.Encode(argv)
	_ = enc.Encode(req.Stdin)
	_ = enc.Encode(req.Files) // map keys are encoded sorted
	return hex.EncodeToString(h.Sum(nil))
}

// servesItself reports whether an fm-control argv names serve or hosts.
func servesItself(argv []string) bool {
	for _, a := range argv[1:] {
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "-") {
			return a == "serve" || a == "hosts"
		}
	}
	return false
}

// withFiles writes the request's files into dir and returns its argv with
// a --<flag>=<file> for each, after the verb (flags go anywhere before
// "--", and a verb's own flags after it).
func withFiles(req remote.Request, dir string) ([]string, error) {
	var flags []string
	for flag, data := range req.Files {
		if !slices.Contains(remote.FileFlags, flag) {
			return nil, fmt.Errorf("--%s names no file a verb reads", phrase.Printable(flag))
		}
		path := filepath.Join(dir, flag)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("write the --%s file: %w", flag, err)
		}
		flags = append(flags, "--"+flag+"="+path)
	}
	at := 1
	if req.Argv[0] == "fm-control" && len(req.Argv) > 1 {
		at = 2
	}
	return slices.Concat(req.Argv[:at], flags, req.Argv[at:]), nil
}

// run executes the request's binary under its deadline.
func (s Server) run(ctx context.Context, req remote.Request, timeout time.Duration) remote.Response {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := req.Argv
	if len(req.Files) > 0 {
		dir, err := os.MkdirTemp("", "fmctl-serve-")
		if err != nil {
			return refusal(req.ID, "make a directory for the request's files: %v; nothing was run", err)
		}
		defer os.RemoveAll(dir)
		if argv, err = withFiles(req, dir); err != nil {
			return refusal(req.ID, "%v; nothing was run", err)
		}
	}
	cmd := backends.Cmd{Path: filepath.Join(s.BinDir, argv[0]), Args: argv[1:], Stdin: req.Stdin}.Command(ctx)
	cmd.Args[0] = argv[0]
	cmd.Env = withHome(s.Env, s.Home)
	cmd.Dir = s.Home
	var stdout, stderr limited
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// SIGTERM, not the runner's SIGKILL: the verb ends its wait and says
	// where it stopped, within a WaitDelay long enough to say it.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	resp := remote.Response{ID: req.ID, Stdout: stdout.String(), Stderr: stderr.String()}
	switch {
	case ctx.Err() != nil:
		// Cut short: whatever it did is not proven.
		resp.Exit = 3
		resp.Stderr += fmt.Sprintf("error: %s did not finish within %s on this host and was stopped; look at the task before retrying\n", req.Argv[0], timeout)
	case cmd.ProcessState != nil:
		resp.Exit = cmd.ProcessState.ExitCode()
		if resp.Exit < 0 {
			resp.Exit = 3
		}
	default:
		return refusal(req.ID, "run %s: %v; nothing was run", req.Argv[0], err)
	}
	return resp
}

// withHome is env with FM_HOME replaced by home.
func withHome(env []string, home string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "FM_HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, "FM_HOME="+home)
}

// limited keeps at most maxOutput bytes of what a verb prints.
type limited struct{ bytes.Buffer }

func (l *limited) Write(p []byte) (int, error) {
	if room := maxOutput - l.Len(); room > 0 {
		l.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// ExecutableDir is the directory of the running binary, where its siblings
// are.
func ExecutableDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Dir(exe), nil
}
