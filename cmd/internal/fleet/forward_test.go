package fleet

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/config"
)

// forwardedBy parses args (after the program name) as a command with
// fm-send's flags and returns what forwarded makes of it.
func forwardedBy(t *testing.T, binary string, args ...string) ([]string, map[string][]byte) {
	t.Helper()
	var argv []string
	var files map[string][]byte
	cmd := &ucli.Command{
		Name: binary,
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json"},
			&ucli.StringFlag{Name: "key"},
			&ucli.StringFlag{Name: "brief"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			var err error
			words := cmd.Args().Slice()
			argv, files, _, err = forwarded(ctx, binary, cmd, "t1", words[1:])
			return err
		},
	}
	// cli.Run, as the binaries run: AfterDoubleDash reads the raw command
	// line it puts in the context.
	var errs bytes.Buffer
	d := edge.Deps{Env: func(string) string { return "" }, Stdout: io.Discard, Stderr: &errs}
	if code := cli.Run(cmd, append([]string{binary}, args...), d.IO()); code != 0 {
		t.Fatalf("%q: exit %d: %s", args, code, errs.String())
	}
	return argv, files
}

func TestForwardedKeepsWordsWordsAndFlagsFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"h1/t1", "hello", "there"}, []string{"fm-send", "t1", "--", "hello", "there"}},
		{[]string{"--json", "h1/t1", "hi"}, []string{"fm-send", "--json=true", "t1", "--", "hi"}},
		// a flag-like word after "--" is text there too
		{[]string{"h1/t1", "--", "--json", "-rf"}, []string{"fm-send", "t1", "--", "--json", "-rf"}},
		// a value that looks like a flag stays the flag's value
		{[]string{"h1/t1", "--key", "Escape"}, []string{"fm-send", "--key=Escape", "t1"}},
	} {
		got, _ := forwardedBy(t, "fm-send", c.args...)
		if !slices.Equal(got, c.want) {
			t.Errorf("forwarded(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

func TestForwardedCarriesANamedFileNotItsPath(t *testing.T) {
	brief := filepath.Join(t.TempDir(), "brief.md")
	if err := os.WriteFile(brief, []byte("do it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	argv, files := forwardedBy(t, "fm-spawn", "h1/t1", "--brief", brief)
	if !slices.Equal(argv, []string{"fm-spawn", "t1"}) || string(files["brief"]) != "do it\n" {
		t.Fatalf("forwarded = %q, files %q", argv, files)
	}
}

// The host's outcome names the task as the caller addressed it, in its
// text line or its JSON, and nothing after the outcome line is touched.
func TestQualifyNamesTheTaskWithItsHost(t *testing.T) {
	addr := config.Address{Host: "gpu1", ID: "t1"}
	for _, c := range []struct{ in, want string }{
		{"sent t1 backend=tmux submit=confirmed\n", "sent gpu1/t1 backend=tmux submit=confirmed\n"},
		{"stopped t1\n", "stopped gpu1/t1\n"},
		{`{"outcome":"sent","id":"t1","bytes":5}` + "\n", `{"outcome":"sent","id":"gpu1/t1","bytes":5}` + "\n"},
		// read's screen text below its outcome line is the agent's
		{"read t1 lines=2\nsent t1 by hand\n", "read gpu1/t1 lines=2\nsent t1 by hand\n"},
		// read --record --json: every entry names the task
		{`{"outcome":"entry","id":"t1","kind":"user"}` + "\n" + `{"outcome":"entry","id":"t1","kind":"reply"}` + "\n",
			`{"outcome":"entry","id":"gpu1/t1","kind":"user"}` + "\n" + `{"outcome":"entry","id":"gpu1/t1","kind":"reply"}` + "\n"},
		// read --record's text is the agent's, whatever its words
		{"2026-01-01T00:00:00Z user: t1 t1\n- reply: t1\n", "2026-01-01T00:00:00Z user: t1 t1\n- reply: t1\n"},
		// another task's id, or none, is left as it is
		{"sent t10 x=y\n", "sent t10 x=y\n"},
		{"", ""},
	} {
		if got := qualify(c.in, addr); got != c.want {
			t.Errorf("qualify(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
