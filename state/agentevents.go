package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The events directory (state/<id>.events/) is the agent's report through
// its hook's shell alone: a hook a harness runs through bash writes one
// new file there with builtins (harness.Hook), where starting fm-control
// would cost the agent a process start on every prompt. Each file is one
// line, `<gen> <event> <at> <key>`: the incarnation the wiring was
// installed for, an allowlisted event, bash's $EPOCHREALTIME and the
// event key the agent's environment holds. The shell creates the file
// exclusively (noclobber), so it never writes through a symlink or over
// another file; when it cannot, the hook runs fm-control agent-event.
//
// Readers fold the directory into the agent-state file's report
// (ReadAgentState): every file of the current generation whose key is the
// task's, in the order of their at, after the report when they are newer.
// A file of another generation, or without the key, says nothing. Past
// eventsCompactAt files, or with one that says nothing, a reader compacts:
// it writes the fold as one snapshot file in the directory and removes
// what it folded, counting a keyless file as a refused event. It never
// rewrites the agent-state file, which agent-event and fmctl's own
// turn-cancelled write, so no fold can overwrite a newer report.

// eventsCompactAt is how many files a reader folds before it compacts
// them: a few turns' worth, so a read stays a handful of small reads and
// most reads write nothing.
const eventsCompactAt = 8

// eventWriteGrace is how long a file may stay empty or without its line's
// end before a reader takes it for a write that died: a hook's shell
// writes its one line right after it creates the file.
const eventWriteGrace = 10 * time.Second

// eventReadRetries bounds the re-reads of a directory a concurrent
// compaction changed under the reader.
const eventReadRetries = 3

// maxEventFile bounds what a reader reads of one file: a hook's line is
// under 200 bytes, a snapshot under 400.
const maxEventFile = 4096

// snapshotPrefix names the files a compaction writes (a hook's are named
// by their at and the shell's pid).
const snapshotPrefix = "snapshot-"

// AgentEventsDir is the task's events directory.
func (s Store) AgentEventsDir(id string) string { return filepath.Join(s.Dir, id+".events") }

// ResetAgentEvents makes the task's events directory, empty, for a new
// incarnation: whatever was in it, or in its place, goes (a symlink
// itself, never what it points at).
func (s Store) ResetAgentEvents(id string) error {
	dir := s.AgentEventsDir(id)
	if info, err := os.Lstat(dir); err == nil && !info.IsDir() {
		if err := os.Remove(dir); err != nil {
			return fmt.Errorf("remove %s: %w", dir, err)
		}
	} else if err == nil {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("clear %s: %w", dir, err)
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

// eventEntry is one file of the directory that says something.
type eventEntry struct {
	name  string
	at    time.Time
	event string      // a hook's event
	snap  *AgentState // a compaction's snapshot
}

// eventFold is what one read of the directory found.
type eventFold struct {
	good     []eventEntry
	useless  []string // another generation's, malformed, or dead writes
	refused  []string // names of files without the task's key, with why
	reasons  []string
	vanished bool   // a listed file was gone when read: a compaction ran
	key      []byte // the task's key, once a file needed it checked
}

// foldAgentEvents returns the report the directory's files bring base
// (ok: base is the current generation's) to, and compacts the directory
// when it has grown or holds files that say nothing.
func (s Store) foldAgentEvents(id, gen string, base AgentState, ok bool, now time.Time) (AgentState, bool) {
	dir := s.AgentEventsDir(id)
	var f eventFold
	for try := 0; try < eventReadRetries; try++ {
		var err error
		if f, err = s.readAgentEvents(id, dir, gen, now); err != nil {
			return base, ok
		}
		if !f.vanished {
			break
		}
	}
	sort.SliceStable(f.good, func(i, j int) bool {
		if !f.good[i].at.Equal(f.good[j].at) {
			return f.good[i].at.Before(f.good[j].at)
		}
		return f.good[i].snap == nil && f.good[j].snap != nil
	})
	st, stOK, fromDir := base, ok, false
	for _, e := range f.good {
		if stOK && !e.at.After(st.At) {
			continue
		}
		if e.snap != nil {
			st = *e.snap
		} else {
			activity, _ := AgentEventState(e.event)
			st = st.Next(activity, gen, e.event, st.Harness, e.at)
		}
		stOK, fromDir = true, true
	}
	if len(f.good)+len(f.useless)+len(f.refused) >= eventsCompactAt || len(f.useless)+len(f.refused) > 0 {
		s.compactAgentEvents(id, dir, f, st, fromDir, now)
	}
	return st, stOK
}

// readAgentEvents reads every file of the directory once.
func (s Store) readAgentEvents(id, dir, gen string, now time.Time) (eventFold, error) {
	// A link in the directory's place is never followed: its target's
	// files are not the task's to read, still less to remove.
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return eventFold{}, err
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return eventFold{}, err
	}
	var f eventFold
	keyRead := false
	for _, e := range entries {
		name := e.Name()
		if !eventFileName(name) {
			continue // not a hook's or a compaction's (its temporary files start with a dot): never read, never removed
		}
		if !e.Type().IsRegular() {
			f.useless = append(f.useless, name)
			continue
		}
		data, err := ReadSmallFile(filepath.Join(dir, name), maxEventFile)
		if errors.Is(err, fs.ErrNotExist) {
			f.vanished = true
			continue
		}
		if err != nil {
			if info, ierr := e.Info(); ierr == nil && info.Size() > maxEventFile {
				f.useless = append(f.useless, name) // no hook writes that much
			}
			continue
		}
		if len(data) == 0 || data[len(data)-1] != '\n' {
			if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > eventWriteGrace {
				f.useless = append(f.useless, name)
			}
			continue // the hook's shell is still writing it
		}
		entry, fileGen, presented, err := parseEventFile(name, data)
		if err != nil {
			f.useless = append(f.useless, name)
			continue
		}
		if fileGen != gen {
			f.useless = append(f.useless, name)
			continue
		}
		if !keyRead {
			f.key, _ = s.readEventKey(id)
			keyRead = true
		}
		if reason := eventKeyRefusal(f.key, presented); reason != "" {
			f.refused = append(f.refused, name)
			f.reasons = append(f.reasons, fmt.Sprintf("event=%s reason=%s via=%s", entry.event, reason, filepath.Base(dir)))
			continue
		}
		f.good = append(f.good, entry)
	}
	return f, nil
}

// eventFileName reports whether name is one a hook's shell gives a file
// ($EPOCHREALTIME, a dot, its pid) or a compaction's snapshot's.
func eventFileName(name string) bool {
	if digits, ok := strings.CutPrefix(name, snapshotPrefix); ok {
		return allDigits(digits)
	}
	sec, rest, ok := strings.Cut(name, ".")
	if !ok {
		sec, rest, ok = strings.Cut(name, ",")
	}
	frac, pid, ok2 := strings.Cut(rest, ".")
	return ok && ok2 && allDigits(sec) && len(frac) == 6 && allDigits(frac) && allDigits(pid)
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// parseEventFile reads a hook's line or a compaction's snapshot.
func parseEventFile(name string, data []byte) (eventEntry, string, string, error) {
	if strings.HasPrefix(name, snapshotPrefix) {
		a, err := ParseAgentState(data)
		if err != nil {
			return eventEntry{}, "", "", err
		}
		presented := ""
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "key="); ok {
				presented = v
			}
		}
		return eventEntry{name: name, at: a.At, snap: &a}, a.Gen, presented, nil
	}
	fields := strings.Fields(string(data))
	if len(fields) != 4 || strings.Count(string(data), "\n") != 1 {
		return eventEntry{}, "", "", fmt.Errorf("event file %s is not one line of four fields", name)
	}
	if _, ok := AgentEventState(fields[1]); !ok {
		return eventEntry{}, "", "", fmt.Errorf("event file %s names no agent event", name)
	}
	at, err := parseEpochRealtime(fields[2])
	if err != nil {
		return eventEntry{}, "", "", fmt.Errorf("event file %s: %w", name, err)
	}
	return eventEntry{name: name, at: at, event: fields[1]}, fields[0], fields[3], nil
}

// parseEpochRealtime reads bash's $EPOCHREALTIME: seconds, the locale's
// decimal point, and microseconds.
func parseEpochRealtime(v string) (time.Time, error) {
	sec, frac, ok := strings.Cut(v, ".")
	if !ok {
		sec, frac, ok = strings.Cut(v, ",")
	}
	if !ok || len(frac) != 6 {
		return time.Time{}, fmt.Errorf("at %q is not seconds and microseconds", v)
	}
	s, err1 := strconv.ParseInt(sec, 10, 64)
	us, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || s <= 0 || us < 0 {
		return time.Time{}, fmt.Errorf("at %q is not seconds and microseconds", v)
	}
	return time.Unix(s, us*1000), nil
}

// compactAgentEvents writes the fold as one snapshot (when it came from the
// directory) and removes what it replaced: every file the fold saw. A
// keyless file is counted as a refused event first. It is best effort: a
// reader that cannot write still read the fold whole.
func (s Store) compactAgentEvents(id, dir string, f eventFold, st AgentState, fromDir bool, now time.Time) {
	keep := ""
	if fromDir {
		// The fold came from files whose key was checked, so f.key is read.
		keep = fmt.Sprintf("%s%d", snapshotPrefix, st.At.UnixNano())
		data := append(st.Bytes(), "key="+string(f.key)+"\n"...)
		if WriteReport(filepath.Join(dir, keep), data) != nil {
			return
		}
	}
	for i, name := range f.refused {
		if os.Remove(filepath.Join(dir, name)) == nil {
			_ = s.CountRefusedEvent(id, now, f.reasons[i])
		}
	}
	for _, name := range f.useless {
		_ = os.Remove(filepath.Join(dir, name))
	}
	for _, e := range f.good {
		if e.name != keep {
			_ = os.Remove(filepath.Join(dir, e.name))
		}
	}
}
