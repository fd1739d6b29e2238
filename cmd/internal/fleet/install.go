package fleet

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/cmd/internal/fact"
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
	sess, err := c.session(ctx, name)
	if err != nil {
		return refusalOf(err, nil)
	}
	o := cli.Outcome{Word: "host-ok", ID: name}
	o.Add("ssh", host.SSH).Add("bin", host.RemoteBin()).Add("version", sess.Hello.Version).Add("arch", sess.Hello.Arch).
		Put(fact.Int("protocol", sess.Hello.Protocol), fact.Bool("same_version", sess.Hello.Version == cli.BuildVersion()))
	d.Printer(asJSON).Outcome(o)
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
				Hint("each binary is replaced whole or not at all; run fm-control hosts install %s again", name)
		}
	}
	sess, err := c.session(ctx, name)
	if err != nil {
		return refusalOf(err, nil)
	}
	o := cli.Outcome{Word: "installed", ID: name}
	o.Add("bin", host.RemoteBin()).Add("version", sess.Hello.Version).Add("arch", sess.Hello.Arch).Put(fact.Int("protocol", sess.Hello.Protocol))
	d.Printer(asJSON).Outcome(o)
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
