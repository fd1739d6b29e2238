package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"fmctl/phrase"
	"fmctl/state"
)

// HostsFileName is the fleet's host table inside the config dir.
const HostsFileName = "hosts.toml"

// Kinds of hosts.toml failure the CLI maps to its error codes.
var (
	// ErrBadHosts: config/hosts.toml cannot be read or names a host
	// fmctl would not reach safely.
	ErrBadHosts = errors.New("unusable hosts table")
	// ErrNoSuchHost: an address names a host the table lacks.
	ErrNoSuchHost = errors.New("no such host")
)

// DefaultRemoteBin is where a host's binaries are when its entry names no
// bin: relative, so the remote login directory (the user's home there)
// anchors it, which is where `fm-control hosts install` puts them.
const DefaultRemoteBin = ".local/bin"

// Host is one entry of config/hosts.toml:
//
//	[hosts.gpu1]
//	ssh  = "me@gpu1.example.com"   # what `ssh <dest>` reaches, as your ssh config understands it
//	home = "/home/me/fm"           # FM_HOME there
//	bin  = "/home/me/.local/bin"   # optional: where the fm-* binaries are there
type Host struct {
	Name string `toml:"-"`
	SSH  string `toml:"ssh"`
	Home string `toml:"home"`
	Bin  string `toml:"bin"`
}

// hostsFile is the file's shape: one table per host.
type hostsFile struct {
	Hosts map[string]Host `toml:"hosts"`
}

// Hosts is the host table, by name.
type Hosts map[string]Host

// Names are the hosts' names, sorted.
func (h Hosts) Names() []string {
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup is the named host, or a refusal naming the hosts there are.
func (h Hosts) Lookup(name, path string) (Host, error) {
	if host, ok := h[name]; ok {
		return host, nil
	}
	if len(h) == 0 {
		return Host{}, state.Errorf(ErrNoSuchHost, "no host '%s': %s names no hosts", phrase.Printable(name), path)
	}
	return Host{}, state.Errorf(ErrNoSuchHost, "no host '%s' in %s (hosts: %s)", phrase.Printable(name), path, strings.Join(h.Names(), ", "))
}

// HostsPath is config/hosts.toml in this home.
func (h Home) HostsPath() string { return filepath.Join(h.Config, HostsFileName) }

// LoadHosts reads config/hosts.toml; a missing file is an empty table.
// Unknown keys and unsafe values are refused whole: a host half-understood
// would be reached in a way the user did not write.
func (h Home) LoadHosts() (Hosts, error) {
	path := h.HostsPath()
	data, err := readConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Hosts{}, nil
	}
	if err != nil {
		return nil, state.Errorf(ErrBadHosts, "read %s: %w", path, err)
	}
	return ParseHosts(path, data)
}

// ParseHosts decodes and checks a hosts table; path names it in errors.
func ParseHosts(path string, data []byte) (Hosts, error) {
	var f hostsFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, state.Errorf(ErrBadHosts, "%s: %w", path, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		keys := make([]string, len(undecoded))
		for i, k := range undecoded {
			keys[i] = k.String()
		}
		return nil, state.Errorf(ErrBadHosts, "%s has unknown keys: %s (a host takes ssh, home and bin)", path, strings.Join(keys, ", "))
	}
	hosts := Hosts{}
	for name, host := range f.Hosts {
		host.Name = name
		if err := host.check(); err != nil {
			return nil, state.Errorf(ErrBadHosts, "%s: %w", path, err)
		}
		hosts[name] = host
	}
	return hosts, nil
}

func (h Host) check() error {
	if !ValidHostName(h.Name) {
		return fmt.Errorf("host name '%s' is not valid: use letters, digits, '.', '_' and '-', not starting with '-' or '.', at most %d characters", phrase.Printable(h.Name), maxHostNameLen)
	}
	switch {
	case h.SSH == "":
		return fmt.Errorf("host %s has no ssh destination (ssh = \"user@host\" or an alias from your ssh config)", h.Name)
	case strings.HasPrefix(h.SSH, "-"):
		// ssh would read it as an option (-oProxyCommand=...).
		return fmt.Errorf("host %s's ssh destination '%s' begins with '-' (ssh would read an option)", h.Name, phrase.Printable(h.SSH))
	case strings.ContainsFunc(h.SSH, badDestRune):
		return fmt.Errorf("host %s's ssh destination '%s' holds a space or control character", h.Name, phrase.Printable(h.SSH))
	case h.Home == "":
		return fmt.Errorf("host %s has no home (the FM_HOME there, an absolute path)", h.Name)
	case !strings.HasPrefix(h.Home, "/"):
		return fmt.Errorf("host %s's home '%s' is not an absolute path", h.Name, phrase.Printable(h.Home))
	case strings.ContainsFunc(h.Home+h.Bin, isControl):
		return fmt.Errorf("host %s's home or bin holds a control character", h.Name)
	case strings.HasPrefix(h.Bin, "-"):
		return fmt.Errorf("host %s's bin '%s' begins with '-'", h.Name, phrase.Printable(h.Bin))
	}
	return nil
}

// RemoteBin is the directory of the host's binaries.
func (h Host) RemoteBin() string {
	if h.Bin == "" {
		return DefaultRemoteBin
	}
	return h.Bin
}

const maxHostNameLen = state.MaxTaskIDLen

// ValidHostName reports whether name may name a host: the task id's
// alphabet, since it becomes a file name (the host's cached listing) and
// the first half of every <host>/<id> address.
func ValidHostName(name string) bool { return state.ValidTaskID(name) }

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func badDestRune(r rune) bool { return isControl(r) || r == ' ' }
