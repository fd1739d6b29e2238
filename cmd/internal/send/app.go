package send

import (
	"context"
	"io"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"fmctl/authority"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/fleet"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/phrase"
)

// maxStdinText bounds a message read from standard input.
const maxStdinText = 1 << 20

// usageText lists --key's values from the capability table.
func usageText() string {
	return `fm-send [--json] <id> <text...>
fm-send <id> -            (the message is read from standard input)
fm-send <id> -- <text...> (every word after -- is text, even --json or a lone -)
fm-send [--discard-draft] [--when-ready [--timeout D]] <id> <text...>
fm-send <id> --key <` + strings.Join(harness.KeyNames(), "|") + `> [--allow-exit]`
}

const description = `Types the text once, literally, into task <id>'s agent and presses Enter until
the composer confirms the submit; long or multi-line text goes as one
bracketed paste, a secondmate's with the [fm-from-firstmate] marker. A task
on another host of config/hosts.toml is <host>/<id>.

Nothing is typed unless the task's own agent is alive and ready: a starting one is waited for
(FM_SEND_READY_WAIT); a dialog, or an agent that would drop the text (pi retrying; cline in its
first turn: --when-ready waits), is refused; a text an idle agent still queues goes first.
Exit 0 means the agent's own record holds the message.

Held text is never typed onto. fmctl's own (its last text, put back after an interrupt it sent,
or left by a send whose Enter never got through) is cleared first (cleared="..."); anything else is
a person's draft: refused (exit 1, draft-in-composer) and kept, unless --discard-draft.

Flags go anywhere before "--"; every word after it is text. Exit 1: refused, nothing delivered;
exit 3: typed and Enter sent, not yet confirmed (queued, or not in the record yet): look before
resending. A key that quits the agent needs --allow-exit (prefer fm-control exit).

Examples:
   fm-send t1 "please rebase on main and rerun the tests"
   fm-send t1 - < review-notes.md          # multi-line: one bracketed paste
   fm-send t1 -- --help is a flag of fm-send  # text that looks like flags`

// App builds the fm-send command line. Flags go anywhere before "--";
// every word after it is message text.
func App(d edge.Deps) *ucli.Command {
	app := &ucli.Command{
		Name:        "fm-send",
		Usage:       "deliver one message (or one named key) to a task's agent",
		UsageText:   usageText(),
		Description: description,
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", Usage: "print the outcome as one JSON object (errors as JSON on stderr)"},
			// OnlyOnce: a second --key would silently replace the first.
			&ucli.StringFlag{Name: "key", Usage: "send the one named `KEY` (" + keyList() + ") instead of text", Validator: cli.Value("key"), OnlyOnce: true},
			&ucli.BoolFlag{Name: "allow-exit", Usage: "with --key: send a key that quits the agent (codex's C-c); prefer fm-control exit"},
			&ucli.BoolFlag{Name: "discard-draft", Usage: "clear a draft a person left in the composer (refused without it) and send; the outcome quotes what was discarded"},
			&ucli.BoolFlag{Name: "when-ready", Usage: "wait until an agent that would drop the text now (pi retrying, cline in its first turn) can take it, then send"},
			&ucli.StringFlag{Name: "timeout", Usage: "with --when-ready: how long to wait, `D` (seconds or a Go duration; default 5m)", Validator: cli.Value("timeout"), OnlyOnce: true},
			fleet.HostFlag(),
		},
		// A <host>/<id> is sent by that host's fm-send (package fleet).
		Action: fleet.Remote(d, "fm-send", func(ctx context.Context, cmd *ucli.Command) error {
			req, err := request(ctx, cmd)
			if err != nil {
				return err
			}
			return task.NewAuthority("fm-send", d.Tunables, d.Printer(req.JSON).Warn).Guard(authority.Send, req.ID, func() error {
				return sendMessage(ctx, d, req)
			})
		}),
	}
	cli.Conventions(cli.TaskCommand(app, edge.Tasks(d.Tunables.Home), nil), d.IO())
	return app
}

// sendMessage reads the message from standard input when asked to, and sends it.
func sendMessage(ctx context.Context, d edge.Deps, req Request) error {
	if req.FromStdin {
		data, err := io.ReadAll(io.LimitReader(os.Stdin, maxStdinText+1))
		if err != nil {
			return fault.Failed("read the message from standard input: %v", err)
		}
		if len(data) > maxStdinText {
			return fault.Failed("the message on standard input is larger than %d bytes; nothing was sent", maxStdinText)
		}
		// A file's last line end goes, CRLF (a Windows file) as well
		// as LF: a CR left behind would be refused as a control byte.
		req.Text = strings.TrimRight(string(data), "\r\n")
	}
	return Sender{Env: d.Env, Tunables: d.Tunables, Runner: d.Runner, Print: d.Printer(req.JSON)}.Run(ctx, req)
}

// request reads `<id> <text...>`, `<id> -` or `<id> --key K` from the
// parsed command line. A lone "-" is standard input, unless it came after
// "--", where every word is text.
func request(ctx context.Context, cmd *ucli.Command) (Request, error) {
	req := Request{JSON: cmd.Bool("json"), Key: cmd.String("key"), AllowExit: cmd.Bool("allow-exit"), DiscardDraft: cmd.Bool("discard-draft"),
		WhenReady: cmd.Bool("when-ready"), Timeout: config.WhenReadyWait}
	args := cmd.Args().Slice()
	if len(args) == 0 {
		return req, fault.Usage("fm-send needs a task id and a message: fm-send <id> <text...> or fm-send <id> --key <Key>")
	}
	req.ID, args = args[0], args[1:]
	if cmd.IsSet("timeout") {
		if !req.WhenReady {
			return req, fault.Usage("--timeout applies to --when-ready only")
		}
		d, err := config.ParseWait(cmd.String("timeout"))
		if err != nil {
			return req, fault.Usage("--timeout '%s': %v", phrase.Printable(cmd.String("timeout")), err)
		}
		req.Timeout = d
	}
	if req.WhenReady && cmd.IsSet("key") {
		return req, fault.Usage("--when-ready applies to a message, not to --key")
	}
	if req.AllowExit && !cmd.IsSet("key") {
		return req, fault.Usage("--allow-exit applies to --key only")
	}
	if cmd.IsSet("key") {
		if req.DiscardDraft {
			return req, fault.Usage("--discard-draft applies to a message, not to --key")
		}
		if len(args) > 0 {
			return req, fault.Usage("--key sends one named key and no text; send the text separately")
		}
		return req, nil
	}
	if len(args) == 0 {
		return req, fault.Usage("fm-send needs a message after the task id: fm-send %s <text...>", phrase.Printable(req.ID))
	}
	after := cli.AfterDoubleDash(ctx)
	if len(args) == 1 && args[0] == "-" && len(after) == 0 {
		req.FromStdin = true
		return req, nil
	}
	// urfave stops reading flags at a word like "-5" and hands the rest over
	// as words, so `fm-send t1 hi -5 --json` would send "--json" as text:
	// before "--", a word that begins with "-" is refused, never sent.
	for _, w := range args[:max(0, len(args)-len(after))] {
		if len(w) > 1 && w[0] == '-' {
			return req, fault.Usage("fm-send takes no flag '%s'; message text that begins with - goes after --: fm-send %s -- <text...>", phrase.Printable(w), phrase.Printable(req.ID))
		}
	}
	req.Text = strings.Join(args, " ")
	return req, nil
}

// Main runs fm-send with the process's real edges.
func Main(args []string) int {
	d := edge.OSDeps()
	return cli.Run(App(d), args, d.IO())
}
