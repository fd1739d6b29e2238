package scripts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"

	"fmctl/cmd/internal/cli"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Every --json run of a binary in any suite is recorded and, when its
// script ends, checked against docs/schema: each object on stdout against
// its binary's (or fm-control verb's) schema, each line on stderr that is
// not a notice or a warning against error.json, and a failure must say its
// exit code in exactly one error object.
const (
	jsonLogEnv = "FMCTL_JSON_LOG"
	jsonTeeEnv = "FMCTL_JSON_TEED" // set in the re-run child, so it runs the binary itself
)

var schemaDir = filepath.Join("..", "..", "..", "docs", "schema")

// jsonRun is one --json invocation and what it printed.
type jsonRun struct {
	Args   []string `json:"args"`
	Exit   int      `json:"exit"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
}

// recordJSON runs main directly, unless the script's run asks for --json:
// then it runs itself again as a child (so nothing the binary does, an
// os.Exit included, can skip the record), passes its streams through and
// appends what it printed to the script's log.
func recordJSON(main func() int) func() int {
	return func() int {
		logPath := os.Getenv(jsonLogEnv)
		if logPath == "" || os.Getenv(jsonTeeEnv) != "" || !cli.AsksJSON(os.Args) || printsNoOutcome(os.Args) || reshaped(os.Args) {
			return main()
		}
		var out, errOut bytes.Buffer
		cmd := exec.Command(os.Args[0], os.Args[1:]...)
		cmd.Env = append(os.Environ(), jsonTeeEnv+"=1")
		cmd.Stdin = os.Stdin
		cmd.Stdout = io.MultiWriter(os.Stdout, &out)
		cmd.Stderr = io.MultiWriter(os.Stderr, &errOut)
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "record --json run: %v\n", err)
			return 1
		}
		// A script stops a background run with a signal: pass it on.
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		go func() {
			for s := range sigs {
				_ = cmd.Process.Signal(s)
			}
		}()
		exit := 0
		var ee *exec.ExitError
		if err := cmd.Wait(); errors.As(err, &ee) {
			exit = ee.ExitCode()
		} else if err != nil {
			exit = 1
		}
		signal.Stop(sigs)
		appendRun(logPath, jsonRun{Args: os.Args, Exit: exit, Stdout: out.String(), Stderr: errOut.String()})
		return exit
	}
}

// printsNoOutcome is a run that prints help, a version or a completion
// script: text by design, whatever else its command line says.
func printsNoOutcome(args []string) bool {
	for _, a := range args[1:] {
		switch {
		case a == "--":
			return false
		case a == "-h", a == "--help", a == "help", a == "-v", a == "--version", a == "--help-exits",
			a == "--generate-bash-completion", a == "--generate-shell-completion", strings.HasPrefix(a, "--completion"):
			return true
		}
	}
	return false
}

// reshaped is a run whose --json field list or --jq reshapes its outcome
// by request: no schema describes what it asked for.
func reshaped(args []string) bool {
	_, out, err := cli.SplitOutputArgs(args)
	return err == nil && out.Filtering()
}

func appendRun(path string, r jsonRun) {
	line, err := json.Marshal(r)
	if err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "record --json run: %v\n", err)
		return
	}
	defer f.Close()
	f.Write(append(line, '\n'))
}

// setupJSONLog gives the script its log, outside $WORK (whose tree some
// scripts compare), and checks it when the script ends.
func setupJSONLog(e *testscript.Env) error {
	dir, err := os.MkdirTemp("", "fmctl-jsonlog")
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, "runs.jsonl")
	e.Setenv(jsonLogEnv, logPath)
	e.Defer(func() {
		defer os.RemoveAll(dir)
		runs, err := readRuns(logPath)
		if err == nil {
			err = errors.Join(checkRuns(runs, e.WorkDir)...)
		}
		if err != nil {
			if tb, ok := e.T().(testing.TB); ok {
				tb.Errorf("--json output does not match docs/schema:\n%v", err)
				return
			}
			e.T().Fatal(err)
		}
	})
	return nil
}

func readRuns(path string) ([]jsonRun, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var runs []jsonRun
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r jsonRun
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("json log: %v", err)
		}
		runs = append(runs, r)
	}
	return runs, sc.Err()
}

// exercised and codesSeen gather, over every script, which schemas some
// run's output was checked against and which error codes were printed.
var exercised, codesSeen sync.Map

// schemas caches docs/schema/*.json across scripts run in parallel.
var schemas sync.Map // name -> *jsonschema.Schema or error

// loadSchema compiles one schema with a full draft 2020-12 validator, so a
// schema may use the whole standard (patterns, formats, conditionals).
func loadSchema(name string) (*jsonschema.Schema, error) {
	if v, ok := schemas.Load(name); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(*jsonschema.Schema), nil
	}
	s, err := jsonschema.NewCompiler().Compile(filepath.Join(schemaDir, name+".json"))
	if err != nil {
		err = fmt.Errorf("schema %s: %w", name, err)
		schemas.Store(name, err)
		return nil, err
	}
	schemas.Store(name, s)
	return s, nil
}

// decodeJSON reads one JSON value as the validator wants it (numbers kept
// exact), refusing trailing data.
func decodeJSON(data []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// violations lists what makes v invalid against s, one line each.
func violations(s *jsonschema.Schema, v any) []string {
	err := s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error != nil {
			out = append(out, fmt.Sprintf("%s: %s", u.InstanceLocation, u.Error))
		}
	}
	if len(out) == 0 {
		out = append(out, ve.Error())
	}
	return out
}

// outcomeSchema names the schema of a run's stdout: its binary's, or for
// fm-control its verb's (the first word that is not a flag).
func outcomeSchema(args []string) string {
	bin := filepath.Base(args[0])
	if bin != "fm-control" {
		return bin
	}
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			return bin + "-" + a
		}
	}
	return bin
}

// checkRuns lists every way the recorded runs break their schemas.
func checkRuns(runs []jsonRun, workDir string) []error {
	var errs []error
	for _, r := range runs {
		if strings.TrimSpace(r.Stdout) != "" {
			exercised.Store(outcomeSchema(r.Args), true)
		}
		objects, _ := checkStderr(r.Stderr)
		failures := checkRun(r)
		for _, o := range objects {
			exercised.Store("error", true)
			codesSeen.Store(fmt.Sprint(o["code"]), true)
			failures = append(failures, overlong(o, workDir)...)
		}
		for _, e := range failures {
			errs = append(errs, fmt.Errorf("%s (exit %d): %w", strings.Join(r.Args, " "), r.Exit, e))
		}
	}
	return errs
}

func checkRun(r jsonRun) []error {
	errs := checkStdout(outcomeSchema(r.Args), r.Stdout)
	objects, stderrErrs := checkStderr(r.Stderr)
	errs = append(errs, stderrErrs...)
	switch {
	case r.Exit == 0 && len(objects) > 0:
		errs = append(errs, errors.New("exit 0, yet stderr has an error object"))
	case r.Exit != 0 && len(objects) != 1:
		errs = append(errs, fmt.Errorf("a failure must print one error object on stderr, printed %d", len(objects)))
	case r.Exit != 0 && fmt.Sprint(objects[0]["exit"]) != fmt.Sprint(r.Exit):
		errs = append(errs, fmt.Errorf("the error object says exit %v", objects[0]["exit"]))
	}
	return errs
}

// maxErrorLine bounds the error line and each hint line: the error says
// what happened in one readable line, and what to do next goes on hint
// lines. The text output prints the same strings as the JSON
// error object's "error" and "hints", so checking them checks both.
const maxErrorLine = 160

// overlong names the error or hint strings of one error object longer
// than maxErrorLine characters, or holding a line break. A path inside the
// script's work directory counts as $WORK, as a script shows it: a user's
// own paths are theirs to make long.
func overlong(o map[string]any, workDir string) []error {
	var errs []error
	check := func(field string, v any) {
		s, ok := v.(string)
		if !ok {
			return
		}
		if workDir != "" {
			s = strings.ReplaceAll(s, workDir, "$WORK")
		}
		if strings.Contains(s, "\n") {
			errs = append(errs, fmt.Errorf("%s line holds a line break (one line each; more go on hint lines): %q", field, s))
		} else if utf8.RuneCountInString(s) > maxErrorLine {
			errs = append(errs, fmt.Errorf("%s line is %d characters, over %d (move what to do next onto hint lines): %q", field, utf8.RuneCountInString(s), maxErrorLine, s))
		}
	}
	check("error", o["error"])
	if hints, ok := o["hints"].([]any); ok {
		for _, h := range hints {
			check("hint", h)
		}
	}
	return errs
}

// checkStdout validates every JSON value on stdout (capabilities prints an
// indented one) against the schema the run's verb names.
func checkStdout(name, stdout string) []error {
	if strings.TrimSpace(stdout) == "" {
		return nil
	}
	s, err := loadSchema(name)
	if err != nil {
		return []error{fmt.Errorf("stdout has output but no schema: %w", err)}
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.UseNumber()
	var errs []error
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			return errs
		}
		if err != nil {
			return append(errs, fmt.Errorf("stdout is not JSON (%v): %q", err, stdout))
		}
		for _, e := range violations(s, v) {
			errs = append(errs, fmt.Errorf("stdout against %s.json: %s", name, e))
		}
	}
}

// checkStderr validates each line that is not a notice or warning against
// error.json and returns the error objects it read.
func checkStderr(stderr string) ([]map[string]any, []error) {
	var objects []map[string]any
	var errs []error
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 || bytes.HasPrefix(line, []byte("notice: ")) || bytes.HasPrefix(line, []byte("warning: ")) {
			continue
		}
		v, err := decodeJSON(line)
		obj, isObj := v.(map[string]any)
		if err != nil || !isObj {
			errs = append(errs, fmt.Errorf("stderr line is neither a notice nor a JSON error object: %q", line))
			continue
		}
		objects = append(objects, obj)
		s, err := loadSchema("error")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range violations(s, v) {
			errs = append(errs, fmt.Errorf("stderr against error.json: %s", e))
		}
	}
	return objects, errs
}

// checkCoverage fails a schema no suite's output was checked against: each
// binary and fm-control verb has a --json run in some suite. It logs the
// error codes the suites printed.
func checkCoverage(t *testing.T) {
	names, err := schemaFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, ok := exercised.Load(n); !ok {
			t.Errorf("docs/schema/%s.json: no suite's --json output was checked against it", n)
		}
	}
	var codes []string
	codesSeen.Range(func(k, _ any) bool { codes = append(codes, k.(string)); return true })
	sort.Strings(codes)
	t.Logf("every one of %d schemas exercised; error codes printed under --json: %s", len(names), strings.Join(codes, " "))
}

// schemaFiles lists docs/schema, for the check that none is unused.
func schemaFiles() ([]string, error) {
	entries, err := os.ReadDir(schemaDir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			names = append(names, n)
		}
	}
	return names, nil
}
