package wire

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// serverSocket reads the server selection tmux would make from the options
// Tmux.server writes (-u, then -L name or -S path) and env: -S, else -L,
// else the socket named first in $TMUX, else the label "default", under
// $TMUX_TMPDIR or /tmp as tmux resolves them. label is whether the socket
// came from a label (tmux's CLIENT_DEFAULTSOCKET). A call without -u (the
// identify flags are -u's: the server prints to a client without
// CLIENT_UTF8 differently), with an empty -L or -S (tmux takes those as
// given, and $TMUX or "default" would name another server), or with any
// other option is left to a tmux client.
func serverSocket(args []string, env []string) (sock string, label bool, rest []string, ok bool) {
	var name, path string
	var utf8, named, pathed bool
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-u":
			utf8 = true
			args = args[1:]
		case (args[0] == "-L" || args[0] == "-S") && len(args) > 1 && !named && !pathed:
			if args[0] == "-L" {
				name, named = args[1], true
			} else {
				path, pathed = args[1], true
			}
			args = args[2:]
		default:
			return "", false, nil, false
		}
	}
	if !utf8 {
		return "", false, nil, false
	}
	if !named && !pathed {
		if t := envValue(env, "TMUX"); t != "" && t[0] != ',' {
			path, _, _ = strings.Cut(t, ",")
			pathed = true
		}
	}
	if pathed {
		return path, false, args, path != ""
	}
	if !named {
		name = "default"
	}
	if name == "" || strings.Contains(name, "/") {
		return "", false, nil, false
	}
	dir, ok := tmuxSocketDir(env)
	if !ok {
		return "", false, nil, false
	}
	return filepath.Join(dir, name), true, args, true
}

// tmuxSocketDir is tmux's per-user socket directory: $TMUX_TMPDIR (when it
// resolves) or /tmp, resolved, then tmux-UID, which tmux refuses unless it
// is this user's and closed to others; so does the wire.
func tmuxSocketDir(env []string) (string, bool) {
	var base string
	if d := envValue(env, "TMUX_TMPDIR"); d != "" {
		base, _ = realPath(d)
	}
	if base == "" {
		r, ok := realPath("/tmp")
		if !ok {
			return "", false
		}
		base = r
	}
	dir := filepath.Join(base, "tmux-"+strconv.Itoa(os.Getuid()))
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o007 != 0 {
		return "", false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return "", false
	}
	return dir, true
}

// realPath is realpath(3): the absolute path with every symlink resolved;
// a relative path is taken from the working directory, as tmux takes a
// relative $TMUX_TMPDIR.
func realPath(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", false
		}
		// Joined without cleaning: EvalSymlinks resolves each ".." against
		// the directory it is really in, as realpath does.
		p = wd + string(filepath.Separator) + p
	}
	r, err := filepath.EvalSymlinks(p)
	return r, err == nil && filepath.IsAbs(r)
}

func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val // the last one wins, as with exec
		}
	}
	return v
}
