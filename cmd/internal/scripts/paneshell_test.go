package scripts

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"fmctl/harness"
)

// paneShellsKey holds a script's stand-in pane shells, by pid file.
type paneShellsKey struct{}

// paneShell is a real bash standing in for a multiplexer pane's shell: it
// runs the command lines inpane gives it, so what it runs descends from it
// as a caller inside a real pane descends from the pane's shell.
type paneShell struct {
	in  io.WriteCloser
	out *bufio.Reader
}

// paneshell FILE starts a stand-in pane shell with the script's environment
// and writes its pid to FILE (a fake multiplexer reports it as a pane's
// shell pid, which fm-spawn records). It ends with the script.
func cmdPaneShell(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: paneshell FILE")
	}
	// The script's whole environment, as `env -0` run from it sees it.
	ts.Check(ts.Exec("env", "-0"))
	env := strings.Split(strings.TrimSuffix(ts.ReadFile("stdout"), "\x00"), "\x00")
	cmd := exec.Command("bash", "--norc", "--noprofile")
	cmd.Env, cmd.Dir = env, ts.Getenv("WORK")
	in, err := cmd.StdinPipe()
	ts.Check(err)
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	ts.Defer(func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	shells, _ := ts.Value(paneShellsKey{}).(map[string]*paneShell)
	shells[args[0]] = &paneShell{in: in, out: bufio.NewReader(out)}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644))
}

// inpane FILE N CMD [ARGS...] runs CMD in the pane shell paneshell FILE
// started and asserts it exits N; its output becomes the script's stdout
// and stderr.
func cmdInPane(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: inpane FILE N CMD [ARGS...]")
	}
	shells, _ := ts.Value(paneShellsKey{}).(map[string]*paneShell)
	sh, ok := shells[args[0]]
	if !ok {
		ts.Fatalf("inpane: no paneshell %s", args[0])
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("inpane: %q is not a number", args[1])
	}
	outFile, errFile := ts.MkAbs(".inpane.stdout"), ts.MkAbs(".inpane.stderr")
	words := make([]string, 0, len(args)-2)
	for _, a := range args[2:] {
		words = append(words, harness.Quote(a))
	}
	line := "cd " + harness.Quote(ts.MkAbs(".")) + " && " + strings.Join(words, " ") + " >" + harness.Quote(outFile) + " 2>" + harness.Quote(errFile) + "; echo \"__rc=$?\"\n"
	_, err = io.WriteString(sh.in, line)
	ts.Check(err)
	got := -1
	for got < 0 {
		l, err := sh.out.ReadString('\n')
		if err != nil {
			ts.Fatalf("inpane: the pane shell ended: %v", err)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "__rc="); ok {
			got, _ = strconv.Atoi(v)
		}
	}
	for file, w := range map[string]io.Writer{outFile: ts.Stdout(), errFile: ts.Stderr()} {
		data, err := os.ReadFile(file)
		ts.Check(err)
		_, _ = io.Copy(w, bytes.NewReader(data))
	}
	if got != want {
		ts.Fatalf("%s in the pane exited with status %d, want %d", args[2], got, want)
	}
}
