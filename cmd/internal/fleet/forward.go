package fleet

import (
	"context"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v3"

	"fmctl/authority"
	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/config"
	"fmctl/phrase"
	"fmctl/remote"
	"fmctl/state"
)

// maxStdin bounds a message read from standard input (fm-send's own bound).
const maxStdin = 1 << 20

// notForwarded are flags that mean something only on this machine.
var notForwarded = []string{"help", "version", "all-hosts", "host"}

// HostFlag is --host HOST, the other spelling of <host>/<id>, for every
// command Remote wraps.
func HostFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "host", Usage: "run the verb on `HOST` of config/hosts.toml, as HOST/<id> does", OnlyOnce: true}
}

// Remote wraps a task command's action: when its first word is
// <host>/<id> (or --host names the host), the verb runs on that host, with
// the same flags and words and the bare id, and its answer is printed
// here; a bare id runs action on this machine, as it always has. binary
// is the fm-* binary running.
func Remote(d edge.Deps, binary string, action ucli.ActionFunc) ucli.ActionFunc {
	return func(ctx context.Context, cmd *ucli.Command) error {
		args := cmd.Args().Slice()
		word, err := addressWord(cmd, args)
		if err != nil {
			return err
		}
		if !strings.Contains(word, "/") {
			return action(ctx, cmd)
		}
		addr, err := config.ParseAddress(binary, word)
		if err != nil {
			return err
		}
		argv, files, stdin, err := forwarded(ctx, binary, cmd, addr.ID, args[1:])
		if err != nil {
			return err
		}
		return task.NewAuthority(binary, d.Tunables, d.Printer(cmd.Bool("json")).Warn).GuardRemote(verbOf(binary, cmd), word, func() error {
			return forward(ctx, d, binary, cmd, word, addr, argv, files, stdin)
		})
	}
}

// hasHost reports whether word is <host>/<id> by its shape (anything
// else with a slash is a bad id, refused as one).
func hasHost(word string) bool {
	host, _, ok := strings.Cut(word, "/")
	return ok && config.ValidHostName(host)
}

// addressWord is the task word as <host>/<id> when --host names the host,
// else the first word as given ("" when there is none).
func addressWord(cmd *ucli.Command, args []string) (string, error) {
	if !cmd.IsSet("host") {
		if len(args) == 0 {
			return "", nil
		}
		return args[0], nil
	}
	host := cmd.String("host")
	switch {
	case host == "":
		return "", fault.Usage("--host is empty: name a host of config/hosts.toml")
	case !config.ValidHostName(host):
		return "", fault.Usage("--host '%s' is not a host name: letters, digits, '.', '_' and '-', not starting with '-' or '.'", phrase.Printable(host))
	case len(args) == 0:
		return "", fault.Usage("--host %s needs the task's id: %s --host %s <id>", phrase.Printable(host), cmd.FullName(), phrase.Printable(host))
	case hasHost(args[0]):
		return "", fault.Usage("'%s' names its host already; give --host or <host>/<id>, not both", phrase.Printable(args[0]))
	}
	return host + "/" + args[0], nil
}

// verbOf names the authority verb a command line asks for.
func verbOf(binary string, cmd *ucli.Command) string {
	switch {
	case binary == "fm-send":
		return authority.Send
	case binary == "fm-teardown":
		return authority.Teardown
	case binary == "fm-spawn" && cmd.Bool("relaunch"):
		return authority.Relaunch
	case binary == "fm-spawn":
		return authority.Spawn
	}
	return cmd.Name
}

// forward runs the verb on addr's host and prints its answer here; word
// is the <host>/<id> as typed.
func forward(ctx context.Context, d edge.Deps, binary string, cmd *ucli.Command, word string, addr config.Address, argv []string, files map[string][]byte, stdin []byte) error {
	client, err := NewClient(d, binary)
	if err != nil {
		return err
	}
	defer client.Close()
	if len(client.Hosts) == 0 {
		// No fleet here: the word is the bad id it always was.
		return state.WithHints(state.CheckTaskArg(binary, word), client.Home.HostsPath()+" names no hosts, so it is no <host>/<id> either")
	}
	resp, err := client.Call(ctx, addr.Host, remote.Request{Argv: argv, Files: files, Stdin: stdin}, callTimeout(d.Tunables, cmd))
	if err != nil {
		return err
	}
	return relay(d, addr, resp)
}

// forwarded is the argv the host runs: the binary, the verb, every flag
// given (as --name=value, so no value is read as a flag there), the bare
// id, and the rest of the words after "--", so none is read as a flag.
// A file a flag names here (--brief, --note-file) is read here and sent,
// and fm-send's lone "-" is read here and sent as the verb's standard input.
func forwarded(ctx context.Context, binary string, cmd *ucli.Command, id string, rest []string) ([]string, map[string][]byte, []byte, error) {
	argv, files := []string{binary}, map[string][]byte{}
	if cmd != cmd.Root() {
		argv = append(argv, cmd.Name)
	}
	var names []string
	for _, c := range []*ucli.Command{cmd, cmd.Root()} {
		for _, f := range c.Flags {
			for _, n := range f.Names() {
				if !slices.Contains(names, n) && !slices.Contains(notForwarded, n) {
					names = append(names, n)
				}
			}
		}
	}
	for _, n := range names {
		if !cmd.IsSet(n) {
			continue
		}
		if slices.Contains(remote.FileFlags, n) {
			data, err := state.ReadUserFile(cmd.String(n), state.MaxBriefBytes)
			if err != nil {
				return nil, nil, nil, fault.Failed("--%s: %v; nothing was sent", n, err)
			}
			files[n] = data
			continue
		}
		switch v := cmd.Value(n).(type) {
		case bool:
			argv = append(argv, "--"+n+"="+strconv.FormatBool(v))
		case string:
			argv = append(argv, "--"+n+"="+v)
		}
	}
	argv = append(argv, id)
	if binary != "fm-send" {
		if len(rest) > 0 {
			return nil, nil, nil, fault.Usage("unexpected argument '%s': %s takes one task id (see %s --help)", phrase.Printable(rest[0]), cmd.FullName(), cmd.FullName())
		}
		return argv, files, nil, nil
	}
	if len(rest) == 1 && rest[0] == "-" && len(cli.AfterDoubleDash(ctx)) == 0 {
		data, err := io.ReadAll(io.LimitReader(os.Stdin, maxStdin+1))
		if err != nil {
			return nil, nil, nil, fault.Failed("read the message from standard input: %v", err)
		}
		if len(data) > maxStdin {
			return nil, nil, nil, fault.Failed("the message on standard input is larger than %d bytes; nothing was sent", maxStdin)
		}
		return append(argv, "-"), files, data, nil
	}
	if len(rest) > 0 {
		argv = append(append(argv, "--"), rest...)
	}
	return argv, files, nil, nil
}

// callTimeout bounds one remote verb: FM_REMOTE_TIMEOUT, plus wait's own
// --timeout, which may be longer.
func callTimeout(tun config.Tunables, cmd *ucli.Command) time.Duration {
	t := tun.Hosts.CallTimeout
	if cmd.Name == "fm-send" && cmd.Bool("when-ready") {
		// The remote fm-send waits for the agent as long as it was told.
		w, err := config.ParseWait(cmd.String("timeout"))
		if err != nil || !cmd.IsSet("timeout") {
			w = config.WhenReadyWait
		}
		return t + w
	}
	if cmd.Name == "wait" {
		if w, err := config.ParseWait(cmd.String("timeout")); err == nil && cmd.IsSet("timeout") {
			t += w
		} else if w, err := config.ParseWait(tun.Control.Wait); err == nil {
			t += w
		}
	}
	return t
}
