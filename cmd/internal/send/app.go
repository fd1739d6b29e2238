package send

import (
	"io"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"fmctl/cmd/internal/cli"
)

// maxStdinText bounds a message read from standard input.
const maxStdinText = 1 << 20

const usageText = `fm-send <id> <text...>
fm-send <id> -            (the message is read from standard input)
fm-send <id> --key <Escape|Enter|C-c|C-u>`

const description = `Types the text once, literally, into task <id>'s agent and presses Enter until
the composer confirms the submit. Multi-line or long text goes as one bracketed
paste. A kind=secondmate task gets the [fm-from-firstmate] routing marker.

Nothing is typed unless the task's own agent (its recorded harness) is alive at
the endpoint, and no message is typed onto input its composer already holds.
For a harness with verified screen signatures (claude, codex, opencode, pi,
gemini) the composer is read by them: a starting agent is waited for (up to
FM_SEND_READY_WAIT, 20 s) instead of typed into half-drawn; a blocking dialog
(trust, sign-in, API key, help, ...) is refused; held text is cleared with the
harness's verified clear and proven empty first (cleared=yes), or refused naming
it; Enter waits until the text is drawn plus the harness's paste settle; and
submit=confirmed means the composer read empty again after it.

Exit status: 0 submit confirmed; 3 typed and Enter sent, but the submit stayed
unconfirmed (look at the pane before resending); 2 bad command line; 1 any other
failure, including a refusal of a shell, a stopped agent, another harness, a
blocking dialog, an agent not ready within FM_SEND_READY_WAIT, or held input that
could not be cleared (nothing may be assumed delivered).

Examples:
   fm-send t1 "please rebase on main and rerun the tests"
   fm-send t1 - < review-notes.md          # multi-line: one bracketed paste
   fm-send t1 --key Escape                 # one named key, never marked`

// App builds the fm-send command line.
func App(d cli.Deps) *ucli.App {
	var jsonOut bool
	app := &ucli.App{
		Name:            "fm-send",
		Usage:           "deliver one message (or one named key) to a task's agent",
		UsageText:       usageText,
		Description:     description,
		Version:         cli.BuildVersion(),
		HideHelpCommand: true,
		BashComplete:    cli.CompleteTaskArgs(d),
		Flags:           []ucli.Flag{&ucli.BoolFlag{Name: "json", Usage: "print the outcome as one JSON object (errors as JSON on stderr)"}},
		Action: func(c *ucli.Context) error {
			jsonOut = c.Bool("json")
			req, err := parseArgs(c.Args().Slice(), jsonOut)
			jsonOut = req.JSON
			if err != nil {
				return err
			}
			if req.Help {
				return ucli.ShowAppHelp(c)
			}
			if req.FromStdin {
				data, err := io.ReadAll(io.LimitReader(os.Stdin, maxStdinText+1))
				if err != nil {
					return cli.Failed("read the message from standard input: %v", err)
				}
				if len(data) > maxStdinText {
					return cli.Failed("the message on standard input is larger than %d bytes; nothing was sent", maxStdinText)
				}
				req.Text = strings.TrimRight(string(data), "\n")
			}
			ctx, cancel := cli.Context()
			defer cancel()
			return Sender{Env: d.Env, Runner: d.Runner, Print: d.Printer(req.JSON)}.Run(ctx, req)
		},
	}
	cli.Conventions(app)
	app.Metadata = map[string]any{"json": &jsonOut}
	return app
}

// Main runs fm-send with the process's real edges.
func Main(args []string) int {
	d := cli.OSDeps()
	app := App(d)
	return cli.Run(app, cli.EndGlobalFlags(args), d, func() bool { return *app.Metadata["json"].(*bool) })
}
