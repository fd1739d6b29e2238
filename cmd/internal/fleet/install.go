package fleet

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/remote"
)

// clientFor is a client and the named host's entry.
func clientFor(d edge.Deps, name string) (*Client, config.Host, error) {
	c, err := NewClient(d, "fm-control")
	if err != nil {
		return nil, config.Host{}, err
	}
	host, err := c.Hosts.Lookup(name, c.Home.HostsPath())
	return c, host, err
}

// check opens a session to name and reports its hello.
func check(ctx context.Context, d edge.Deps, name string, asJSON bool) error {
	c, host, err := clientFor(d, name)
	if err != nil {
		return err
	}
	defer c.Close()
	sess, err := c.open(ctx, name)
	if err != nil {
		return refusalOf(err, nil)
	}
	defer sess.Close()
	o := cli.Outcome{Word: "host-ok", ID: name}
	o.Add("ssh", host.SSH).Add("bin", host.RemoteBin()).Add("version", sess.Hello.Version).Add("arch", sess.Hello.Arch).
		Put(fault.Int("protocol", sess.Hello.Protocol), fault.Bool("same_version", sess.Hello.Version == cli.BuildVersion()))
	c.addKeeper(&o, host)
	d.Printer(asJSON).Outcome(o)
	return nil
}

// addKeeper says whether host's keeper is up, and what it holds.
func (c *Client) addKeeper(o *cli.Outcome, host config.Host) {
	if c.Tun.Keep <= 0 {
		o.Add("keeper", "off")
		return
	}
	info, up := remote.KeeperStatus(c.keeperPath(host), probeTimeout)
	if !up {
		o.Add("keeper", "down")
		return
	}
	o.Add("keeper", "up").Put(fault.Int("keeper_pid", info.PID), fault.Int("keeper_serves_started", info.Started), fault.Int("keeper_serves_idle", info.Idle))
}

// disconnect stops host name's keeper and closes its master connection:
// the next verb starts both afresh.
func disconnect(ctx context.Context, d edge.Deps, name string, asJSON bool) error {
	c, host, err := clientFor(d, name)
	if err != nil {
		return err
	}
	defer c.Close()
	o := cli.Outcome{Word: "disconnected", ID: name}
	pid, err := remote.StopKeeper(c.keeperPath(host), probeTimeout)
	if err != nil {
		return fault.Failed("stop host %s's keeper: %v", name, err).With("host", name)
	}
	if pid == 0 {
		o.Add("keeper", "none")
	} else {
		o.Add("keeper", "stopped").Put(fault.Int("keeper_pid", pid))
	}
	if c.SSH.ExitMaster(ctx, host) {
		o.Add("master", "closed")
	} else {
		o.Add("master", "none")
	}
	d.Printer(asJSON).Outcome(o)
	return nil
}

// keep is the hidden `fm-control hosts keep --socket <path> <host>`: the
// keeper process a caller starts, holding host's serve until it has been
// idle for FM_HOSTS_KEEP.
func keep(ctx context.Context, d edge.Deps, name, socket string) error {
	c, host, err := clientFor(d, name)
	if err != nil {
		return err
	}
	if c.Tun.Keep <= 0 {
		return fault.Usage("FM_HOSTS_KEEP is 0: no keeper runs")
	}
	if filepath.Dir(socket) != c.SSH.ControlDir {
		return fault.Usage("--socket %s is not in the control directory %s", socket, c.SSH.ControlDir)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	k := &remote.Keeper{SSH: c.SSH, Host: host, Path: socket, Idle: c.Tun.Keep}
	if err := k.Run(ctx); err != nil {
		return fault.Failed("%v", err)
	}
	return nil
}

// unameArch maps `uname -s`/`uname -m` to Go's GOOS/GOARCH.
var unameArch = map[string]string{
	"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64",
	"i386": "386", "i686": "386", "armv7l": "arm", "riscv64": "riscv64", "ppc64le": "ppc64le", "s390x": "s390x",
}

// installScript writes standard input to <dir>/<name> atomically (a
// temporary file in the same directory, renamed over it) and prints the
// bytes it wrote, so a short copy is caught before the rename.
const installScript = `set -e
d=$1; n=$2; want=$3
mkdir -p -- "$d"
t="$d/.$n.fmctl-install.$$"
trap 'rm -f -- "$t"' EXIT
cat > "$t"
got=$(wc -c < "$t" | tr -d ' ')
[ "$got" = "$want" ] || { echo "wrote $got of $want bytes" >&2; exit 1; }
chmod 755 "$t"
mv -f -- "$t" "$d/$n"
trap - EXIT`

// install copies this machine's binaries to name's bin, after checking
// that the host runs what they were built for.
func install(ctx context.Context, d edge.Deps, name string, asJSON bool) error {
	c, host, err := clientFor(d, name)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, c.Tun.CallTimeout)
	defer cancel()
	out, err := c.SSH.Run(ctx, host, nil, "uname", "-s", "-m")
	if err != nil {
		return refusalOf(err, nil)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 {
		return fault.Failed("host %s answered uname -s -m with %q; nothing was copied", name, sanitize(string(out)))
	}
	goos, goarch := strings.ToLower(fields[0]), unameArch[fields[1]]
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		return fault.Failed("host %s is %s/%s (uname: %s) and these binaries are %s/%s; nothing was copied", name, goos, orUnknown(goarch), sanitize(strings.TrimSpace(string(out))), runtime.GOOS, runtime.GOARCH).
			Coded(fault.ENoRemoteBinaries).With("host", name).
			Hint("build them for it (GOOS=%s GOARCH=%s make build) and copy them to %s there", goos, orUnknown(goarch), host.RemoteBin())
	}
	dir, err := ExecutableDir()
	if err != nil {
		return fault.Failed("find this binary's directory: %v", err)
	}
	for _, bin := range remote.Binaries {
		path := filepath.Join(dir, bin)
		f, err := os.Open(path)
		if err != nil {
			return fault.Failed("open %s: %v; nothing more was copied", path, err)
		}
		info, err := f.Stat()
		if err == nil {
			_, err = c.SSH.Run(ctx, host, f, "sh", "-c", installScript, "sh", host.RemoteBin(), bin, strconv.FormatInt(info.Size(), 10))
		}
		f.Close()
		if err != nil {
			return fault.Failed("copy %s to host %s: %v", bin, name, err).With("host", name).
				Hint("each binary is replaced whole or not at all; to run it again: fm-control hosts install %s", name)
		}
	}
	// A keeper holds a serve of the binaries just replaced: stopped, the
	// next verb starts the new ones.
	if _, err := remote.StopKeeper(c.keeperPath(host), probeTimeout); err != nil {
		d.Printer(asJSON).Warn("host %s's keeper holds a serve of the old binaries and did not stop (%v); fm-control hosts disconnect %s stops it", name, err, name)
	}
	sess, err := c.open(ctx, name)
	if err != nil {
		return refusalOf(err, nil)
	}
	defer sess.Close()
	o := cli.Outcome{Word: "installed", ID: name}
	o.Add("bin", host.RemoteBin()).Add("version", sess.Hello.Version).Add("arch", sess.Hello.Arch).Put(fault.Int("protocol", sess.Hello.Protocol))
	d.Printer(asJSON).Outcome(o)
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
