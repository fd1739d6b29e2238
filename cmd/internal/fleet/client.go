package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/phrase"
	"fmctl/remote"
	"fmctl/state"
)

// Client reaches the hosts of one invocation: each host's requests go
// through its keeper, which holds one remote fmctl across invocations
// (FM_HOSTS_KEEP), or through a session of this invocation's own.
type Client struct {
	Home  config.Home
	Hosts config.Hosts
	SSH   remote.SSH
	Tun   config.HostVars

	// notice says on stderr what the caller should know but did not ask.
	notice func(format string, args ...any)
	mu     sync.Mutex
	conns  map[string]conn
}

// conn carries one host's requests: a *remote.Kept (through the host's
// keeper) or a *remote.Session (this invocation's own).
type conn interface {
	Call(ctx context.Context, req remote.Request) (remote.Response, error)
	Close()
}

// probeTimeout bounds the check of an existing master connection: a live
// one answers in milliseconds, so a second means dead or wedged.
const probeTimeout = 2 * time.Second

// masterPersist keeps an idle master connection up between invocations,
// so the next verb skips the ssh handshake.
const masterPersist = 10 * time.Minute

// NewClient reads the home's hosts table. tool names the binary in
// refusals.
func NewClient(d edge.Deps, tool string) (*Client, error) {
	home, err := config.LocateHome(tool, d.Tunables.Home)
	if err != nil {
		return nil, err
	}
	hosts, err := home.LoadHosts()
	if err != nil {
		return nil, err
	}
	dir, err := remote.DefaultControlDir(d.Env)
	if err != nil {
		return nil, fault.Failed("%v", err)
	}
	tun := d.Tunables.Hosts
	return &Client{
		Home: home, Hosts: hosts, Tun: tun,
		SSH: remote.SSH{
			ConfigFile: tun.SSHConfig, ConnectTimeout: tun.ConnectTimeout, ControlDir: dir,
			Persist: masterPersist, ProbeTimeout: probeTimeout, LocalVersion: cli.BuildVersion(),
		},
		notice: d.Printer(false).Notice,
		conns:  map[string]conn{},
	}, nil
}

// helloWait bounds a new serve's hello (a new master's handshake and the
// remote login shell: the connect timeout, and as long again for the
// rest), and a held serve's ping.
func (c *Client) helloWait() time.Duration { return 2 * c.Tun.ConnectTimeout }

// conn is host's connection, made on first use.
func (c *Client) conn(ctx context.Context, name string) (conn, error) {
	host, err := c.Hosts.Lookup(name, c.Home.HostsPath())
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	cn := c.conns[name]
	c.mu.Unlock()
	if cn != nil {
		return cn, nil
	}
	if c.Tun.Keep > 0 {
		path := c.keeperPath(host)
		cn = &remote.Kept{SSH: c.SSH, Host: host, Path: path, Wait: c.helloWait(), Start: startKeeper(name, path)}
	} else if cn, err = c.open(ctx, name); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.conns[name] = cn
	c.mu.Unlock()
	return cn, nil
}

// open starts a session of this invocation's own on host name: what
// hosts check and install ask, and every call when FM_HOSTS_KEEP is 0.
func (c *Client) open(ctx context.Context, name string) (*remote.Session, error) {
	host, err := c.Hosts.Lookup(name, c.Home.HostsPath())
	if err != nil {
		return nil, err
	}
	return c.SSH.Open(ctx, host, c.helloWait())
}

// keeperPath is host's keeper socket for this build: its version and the
// directory of its binaries, so a caller meets only a keeper of its own.
func (c *Client) keeperPath(h config.Host) string {
	dir, _ := ExecutableDir()
	return c.SSH.KeeperPath(h, cli.BuildVersion()+"\x00"+dir)
}

// startKeeper starts `fm-control hosts keep --socket <path> <name>`, this
// binary's sibling, detached.
func startKeeper(name, path string) func() (<-chan struct{}, error) {
	return func() (<-chan struct{}, error) {
		dir, err := ExecutableDir()
		if err != nil {
			return nil, err
		}
		return remote.StartDetached(filepath.Join(dir, "fm-control"), "hosts", "keep", "--socket", path, "--", name)
	}
}

// Call runs req (its Argv, Files and Stdin) on host under timeout; the
// request id and deadline are set here. Its error is already the user's
// refusal (see refusalOf).
func (c *Client) Call(ctx context.Context, host string, req remote.Request, timeout time.Duration) (remote.Response, error) {
	id, err := c.requestID()
	if err != nil {
		return remote.Response{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cn, err := c.conn(ctx, host)
	if err != nil {
		return remote.Response{}, refusalOf(err, req.Argv)
	}
	// The verb there stops a little before this side gives up, so its own
	// answer (even "did not finish") normally arrives.
	verbTimeout := timeout - min(timeout/10, 5*time.Second)
	req.ID, req.TimeoutMS = id, verbTimeout.Milliseconds()
	resp, err := cn.Call(ctx, req)
	if kept, ok := cn.(*remote.Kept); ok && c.notice != nil {
		if why := kept.Fallback(); why != nil {
			c.notice("host %s: no keeper (%v), so this call opened its own ssh session and paid the remote login", host, why)
		}
	}
	if err != nil {
		return remote.Response{}, refusalOf(err, req.Argv)
	}
	return resp, nil
}

// requestID is FM_REQUEST_ID, to retry an unconfirmed call, else a fresh
// random id.
func (c *Client) requestID() (string, error) {
	if id := c.Tun.RequestID; id != "" {
		if !state.ValidRequestID(id) {
			return "", fault.Usage("FM_REQUEST_ID '%s' is not a request id (8 to 64 letters, digits, '-' or '_'); use the one an unconfirmed call printed", phrase.Printable(id))
		}
		return id, nil
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]), nil
}

// Close ends every connection (a keeper holds on to its serve).
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cn := range c.conns {
		cn.Close()
	}
	c.conns = map[string]conn{}
}

// refusalOf turns a failed exchange into the user's refusal: before the
// request, exit 1, nothing was sent; after it, a mutation is exit 3
// unconfirmed naming the request id, and a read is exit 1.
func refusalOf(err error, argv []string) error {
	var re *remote.Error
	if !errors.As(err, &re) {
		return err
	}
	install := "what is there: fm-control hosts check " + re.Host + "; to copy this machine's binaries: fm-control hosts install " + re.Host
	switch {
	case errors.Is(re, remote.ErrMismatch):
		return fault.Failed("%s", re.Error()).Coded(fault.EProtocolMismatch).With("host", re.Host).Hint("%s", install)
	case errors.Is(re, remote.ErrNoBinaries):
		return fault.Failed("%s", re.Error()).Coded(fault.ENoRemoteBinaries).With("host", re.Host).Hint("%s", install)
	case errors.Is(re, remote.ErrLost) && remote.Mutates(argv):
		return fault.Unconfirmed("%s; it may or may not have run there", re.Error()).Coded(fault.EUnconfirmed).With("host", re.Host, "request", re.Request).
			Hint("look before retrying: fm-control status %s/<id>", re.Host).
			Hint("to retry it without acting twice: FM_REQUEST_ID=%s and the same command; the host answers from memory if it ran", re.Request)
	case errors.Is(re, remote.ErrLost):
		return fault.Failed("%s; the verb changes nothing, so ask again", re.Error()).Coded(fault.EHostUnreachable).With("host", re.Host)
	}
	return fault.Failed("%s", re.Error()).Coded(fault.EHostUnreachable).With("host", re.Host).
		Hint("check the connection as fmctl makes it: ssh -o BatchMode=yes <the host's ssh destination> true")
}

// relay prints a host's answer as its verb printed it, and exits with its
// code. Text from the host is kept free of terminal escapes.
func relay(d edge.Deps, addr config.Address, resp remote.Response) error {
	if resp.Replayed {
		// Said on stderr so a --json reader's stdout stays one object.
		d.Printer(false).Notice("request %s had already run on the host; this is its remembered outcome, nothing was run again", resp.ID)
	}
	relayStdout(d, qualify(sanitize(resp.Stdout), addr))
	_, _ = d.Stderr.Write([]byte(sanitize(resp.Stderr)))
	if resp.Exit == 0 {
		return nil
	}
	return &cli.Relayed{Exit: resp.Exit}
}

// qualify names the task in the host's outcome as the caller addressed
// it: the outcome line's id word (`sent t1 ...` becomes `sent gpu1/t1
// ...`) or its JSON "id", so a fleet's outputs never show two tasks t1.
// Only the first line of text is the outcome; what follows (read's screen
// text, or its record's entries) is the agent's and passes as it is. Under
// --json every line is an object (read --record's entries, a follow's
// batches), each naming the task.
func qualify(out string, addr config.Address) string {
	first, rest, lines := strings.Cut(out, "\n")
	bare, _ := json.Marshal(addr.ID)
	full, _ := json.Marshal(addr.String())
	if strings.HasPrefix(first, "{") {
		all := strings.Split(out, "\n")
		for i, l := range all {
			if strings.HasPrefix(l, "{") {
				all[i] = strings.Replace(l, `"id":`+string(bare), `"id":`+string(full), 1)
			}
		}
		return strings.Join(all, "\n")
	}
	if words := strings.SplitN(first, " ", 3); len(words) >= 2 && words[1] == addr.ID {
		words[1] = addr.String()
		first = strings.Join(words, " ")
	}
	if !lines {
		return first
	}
	return first + "\n" + rest
}

// relayStdout prints the host's stdout here. The host ran with plain
// --json: a field list or --jq given here is applied here, to each JSON
// line, as to a local outcome.
func relayStdout(d edge.Deps, out string) {
	if !d.Output.Filtering() {
		_, _ = d.Stdout.Write([]byte(out))
		return
	}
	p := d.Printer(true)
	for _, line := range strings.SplitAfter(out, "\n") {
		if trimmed := strings.TrimSpace(line); json.Valid([]byte(trimmed)) && trimmed != "" {
			p.Value(json.RawMessage(trimmed))
			continue
		}
		_, _ = d.Stdout.Write([]byte(line))
	}
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}
