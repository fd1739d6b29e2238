package fleet

import (
	"context"
	"os"

	ucli "github.com/urfave/cli/v3"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/state"
)

// ServeCommand is the hidden `fm-control serve --home H`: what another
// machine's fmctl runs over ssh, one per session. It reads requests on
// standard input and answers on standard output until its input ends.
func ServeCommand(d edge.Deps) *ucli.Command {
	return &ucli.Command{
		Name:   "serve",
		Usage:  "answer another machine's requests over ssh (JSON lines on stdin and stdout)",
		Hidden: true,
		Flags:  []ucli.Flag{&ucli.StringFlag{Name: "home", Usage: "the `FM_HOME` the verbs run in", Required: true, Validator: cli.Value("home")}},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			home, err := config.LocateHome("fm-control serve", config.HomeVars{Root: cmd.String("home")})
			if err != nil {
				return err
			}
			dir, err := ExecutableDir()
			if err != nil {
				return fault.Failed("find this binary's directory: %v", err)
			}
			s := Server{Home: home.Root, BinDir: dir, Env: os.Environ(), Version: cli.BuildVersion(), Log: state.Store{Dir: home.State}.Requests()}
			if err := s.Serve(ctx, os.Stdin, d.Stdout); err != nil {
				return fault.Failed("fm-control serve: %v", err)
			}
			return nil
		},
	}
}

// HostsCommand is `fm-control hosts check|install|disconnect <host>`, and
// the hidden `hosts keep`, the keeper process.
func HostsCommand(d edge.Deps) *ucli.Command {
	// onHost is an action on the one host its command line names.
	onHost := func(fn func(ctx context.Context, cmd *ucli.Command, name string) error) ucli.ActionFunc {
		return func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() != 1 {
				return fault.Usage("%s takes one host name from config/hosts.toml: %s", cmd.FullName(), cmd.UsageText)
			}
			return fn(ctx, cmd, cmd.Args().First())
		}
	}
	return &ucli.Command{
		Name:      "hosts",
		Usage:     "check, install or disconnect fmctl on a host of config/hosts.toml",
		UsageText: "fm-control hosts check <host> [--json]\nfm-control hosts install <host> [--json]\nfm-control hosts disconnect <host> [--json]",
		Description: `A task on another host is addressed <host>/<id>; config/hosts.toml names the
host (see docs/hosts.md). check says whether the host's binaries answer and
speak this fmctl's protocol, and whether a keeper (the local process holding
one fmctl there across invocations) is up; install copies this machine's
binaries there, over the same ssh connection, after checking the host's OS and
architecture; disconnect stops the host's keeper and closes its ssh master
connection, and the next verb starts both afresh.

Examples:
   fm-control hosts check gpu1
   fm-control hosts install gpu1
   fm-control hosts disconnect gpu1`,
		Commands: []*ucli.Command{
			{
				Name:      "check",
				Usage:     "say whether the host's fmctl answers and matches this one",
				UsageText: "fm-control hosts check <host> [--json]",
				Action: onHost(func(ctx context.Context, cmd *ucli.Command, name string) error {
					return check(ctx, d, name, cmd.Bool("json"))
				}),
			},
			{
				Name:      "install",
				Usage:     "copy this machine's fm-send, fm-control, fm-spawn and fm-teardown to the host's bin",
				UsageText: "fm-control hosts install <host> [--json]",
				Action: onHost(func(ctx context.Context, cmd *ucli.Command, name string) error {
					return install(ctx, d, name, cmd.Bool("json"))
				}),
			},
			{
				Name:      "disconnect",
				Usage:     "stop the host's keeper and close its ssh master connection",
				UsageText: "fm-control hosts disconnect <host> [--json]",
				Action: onHost(func(ctx context.Context, cmd *ucli.Command, name string) error {
					return disconnect(ctx, d, name, cmd.Bool("json"))
				}),
			},
			{
				Name:      "keep",
				Usage:     "hold one fm-control serve on the host across invocations (started by the first caller that finds none)",
				UsageText: "fm-control hosts keep --socket <path> <host>",
				Hidden:    true,
				Flags:     []ucli.Flag{&ucli.StringFlag{Name: "socket", Usage: "the keeper's `socket`, in the ssh control directory", Required: true, Validator: cli.Value("socket")}},
				Action: onHost(func(ctx context.Context, cmd *ucli.Command, name string) error {
					return keep(ctx, d, name, cmd.String("socket"))
				}),
			},
		},
	}
}
