package config

import (
	"strings"

	"fmctl/state"
)

// Address is a task argument: a bare id, on this machine, or <host>/<id>,
// a task in the home config/hosts.toml names for that host. Every binary
// parses its task argument here, so the two forms mean one thing
// everywhere.
type Address struct {
	Host string // "" for a task on this machine
	ID   string
}

// Remote reports whether the task is on another host.
func (a Address) Remote() bool { return a.Host != "" }

func (a Address) String() string {
	if a.Host == "" {
		return a.ID
	}
	return a.Host + "/" + a.ID
}

// ParseAddress splits arg. A bare id comes back as given, for the local
// checks to judge as they always have; <host>/<id> is checked whole here,
// both halves, so a hostile host name or id never reaches ssh.
func ParseAddress(tool, arg string) (Address, error) {
	host, id, remote := strings.Cut(arg, "/")
	if !remote {
		return Address{ID: arg}, nil
	}
	if !ValidHostName(host) {
		// No host is named like that, so the word is judged as the id it
		// then is, and refused as one, as it always was.
		return Address{}, state.CheckTaskArg(tool, arg)
	}
	if err := state.CheckTaskArg(tool, id); err != nil {
		return Address{}, err
	}
	return Address{Host: host, ID: id}, nil
}
