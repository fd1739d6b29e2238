package wire

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"fmctl/state"
)

// onByDefault is whether the wire speaks to release v without FM_TMUX_WIRE=1.
// Two things must both hold:
//
//   - A malformed client message drops that client instead of ending the
//     server. Read in tmux's source (github.com/tmux/tmux): through 3.5a,
//     server-client.c fatalx'es on a bad identify or MSG_COMMAND; 3.6
//     (commit 3520e833a, "Be more robust against misbehaving clients") kills
//     only the peer there, but file.c still fatalx'es on a bad
//     MSG_WRITE_READY, MSG_READ or MSG_READ_DONE through 3.6b; 3.7 (commit
//     1d9522a7a, "Kill client rather than fatalx on bad file handling
//     messages") returns an error for those too, which server-client.c turns
//     into proc_kill_peer. In 3.7c no fatalx is left on a message a client
//     sends to the server (the ones in file.c and client.c are the
//     client's, on messages from the server).
//   - The wire's tests ran against that exact tag (scripts/wire-versions.sh):
//     tmux changes the protocol without bumping its version number, so a
//     release not run is a release not known.
func onByDefault(v string) bool {
	switch v {
	case "3.7c":
		return true
	}
	return false
}

// protocolKnown: the releases whose client protocol the wire was written
// from (3.2 to 3.7, with any letter), which FM_TMUX_WIRE=1 opens to it.
// 3.2a to 3.6b exit on a malformed message, so there a bug in the wire, or
// a protocol change no test caught, ends every agent on the server.
func protocolKnown(v string) bool {
	major, rest, ok := strings.Cut(v, ".")
	if !ok || major != "3" || rest == "" || rest[0] < '2' || rest[0] > '7' {
		return false
	}
	suffix := rest[1:]
	return suffix == "" || (len(suffix) == 1 && suffix[0] >= 'a' && suffix[0] <= 'z')
}

// version is what the tmux file at path (bin, stat'ed) says it is, from
// this process's memory, else the cache, else running `path -V`.
func (w *Wire) version(ctx context.Context, path string, bin os.FileInfo) (string, error) {
	key := binaryKey(bin)
	if key == "" {
		return "", fmt.Errorf("no identity for %s", path)
	}
	w.mu.Lock()
	v, ok := w.versions[key]
	w.mu.Unlock()
	if ok {
		return v, nil
	}
	if v, ok = w.cachedVersion(key); !ok {
		var err error
		if v, err = askVersion(ctx, path, key); err != nil {
			return "", err
		}
		w.cacheVersion(key, v)
	}
	w.mu.Lock()
	if w.versions == nil {
		w.versions = map[string]string{}
	}
	w.versions[key] = v
	w.mu.Unlock()
	return v, nil
}

// askVersion runs `path -V` ("tmux 3.3a"). The answer counts only if the
// file still has identity key afterwards: one replaced while it ran may
// have answered for the old or the new tmux.
func askVersion(ctx context.Context, path, key string) (string, error) {
	out, err := exec.CommandContext(ctx, path, "-V").Output()
	if err != nil {
		return "", fmt.Errorf("%s -V: %w", path, err)
	}
	after, err := os.Stat(path)
	if err != nil || binaryKey(after) != key {
		return "", fmt.Errorf("%s changed while it reported its version", path)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "tmux ")
	if !ok || v == "" || strings.ContainsAny(v, " \t\r\n") {
		return "", fmt.Errorf("%s -V printed %q, not a tmux version", path, out)
	}
	return v, nil
}

// cachedVersion is the version the cache holds for the tmux file whose
// identity is key. The cache holds one line, "<key>\t<version>": the last
// tmux file asked.
func (w *Wire) cachedVersion(key string) (string, bool) {
	if w.CachePath == "" {
		return "", false
	}
	data, err := state.ReadSmallFile(w.CachePath, 4096)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	k, v, ok := strings.Cut(line, "\t")
	return v, ok && k == key && v != ""
}

// cacheVersion records the version of the tmux file whose identity is
// key. A cache that cannot be written only costs the next process a
// `tmux -V`.
func (w *Wire) cacheVersion(key, version string) {
	if w.CachePath == "" || strings.ContainsAny(version, "\t\n") {
		return
	}
	if err := os.MkdirAll(filepath.Dir(w.CachePath), 0o755); err != nil {
		return
	}
	_ = state.WriteAtomic(w.CachePath, []byte(key+"\t"+version+"\n"))
}
