package state

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"fmctl/phrase"
)

// MaxTaskIDLen bounds a task id; it also bounds every path built from one.
const MaxTaskIDLen = 64

// ValidTaskID reports whether id may name a task: letters, digits, '.', '_'
// and '-', not starting with '-' or '.', at most 64 characters. Ids become
// file names and window names, so nothing else is allowed.
func ValidTaskID(id string) bool {
	if id == "" || len(id) > MaxTaskIDLen || id[0] == '-' || id[0] == '.' {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Label is the endpoint label of a task (its tmux window name).
func Label(id string) string { return "fm-" + id }

// LabelTask is Label's inverse: the task id an endpoint label carries, if
// the label is one fmctl would give.
func LabelTask(label string) (string, bool) {
	id, ok := strings.CutPrefix(label, "fm-")
	return id, ok && ValidTaskID(id)
}

// CheckTaskArg refuses what is clearly not a task id, before any lock is
// taken: an explicit endpoint and an invalid id. tool names the binary.
func CheckTaskArg(tool, id string) error {
	if strings.Contains(id, ":") {
		return Errorf(ErrBadTaskID, "'%s' is an explicit backend endpoint; %s accepts an exact task id only (the id whose record is state/<id>.meta)%s", phrase.Printable(id), tool, endpointHint(id))
	}
	if !ValidTaskID(id) {
		return WithHints(Errorf(ErrBadTaskID, "'%s' is not a valid task id", phrase.Printable(id)),
			fmt.Sprintf("a task id is letters, digits, '.', '_' and '-', not starting with '-' or '.', at most %d characters", MaxTaskIDLen))
	}
	return nil
}

// endpointHint names the task id an endpoint's label carries (sess:fm-t1 is
// task t1's window), so the refusal says what to type instead; an endpoint
// whose label is not fm-<id> names no task and gets no hint.
func endpointHint(endpoint string) string {
	label := endpoint[strings.LastIndex(endpoint, ":")+1:]
	if id, ok := LabelTask(label); ok {
		return fmt.Sprintf(": pass '%s'", id)
	}
	return ""
}

// CheckNewTaskID refuses an id a new task may not take: fm-<x> is a window
// label, and a task named so would have the label fm-fm-<x> and be confused
// with task <x> by every verb's label hint.
func CheckNewTaskID(tool, id string) error {
	if err := CheckTaskArg(tool, id); err != nil {
		return err
	}
	if strings.HasPrefix(id, "fm-") {
		return Errorf(ErrBadTaskID, "'%s' begins with fm-, the prefix of endpoint labels; %s refuses it as a task id (use '%s')", phrase.Printable(id), tool, strings.TrimPrefix(id, "fm-"))
	}
	return nil
}

// Store locates a home's per-task files.
type Store struct {
	Dir string // the state directory
}

func (s Store) MetaPath(id string) string      { return filepath.Join(s.Dir, id+".meta") }
func (s Store) LockPath(id string) string      { return filepath.Join(s.Dir, ".control-"+id+".lock") }
func (s Store) SendLockPath(id string) string  { return filepath.Join(s.Dir, ".send-"+id+".lock") }
func (s Store) SendQueuePath(id string) string { return filepath.Join(s.Dir, ".sends-"+id+".lock") }
func (s Store) BusyStatePath(id string) string {
	return filepath.Join(s.Dir, id+".busy-state")
}
func (s Store) BusyGenPath(id string) string { return filepath.Join(s.Dir, id+".busy-gen") }

// WorktreeLockPath is the lock a launch holds on the worktree dir
// (resolved by the caller), named by a hash of it, since a path can be
// longer than a file name may be.
func (s Store) WorktreeLockPath(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(s.Dir, fmt.Sprintf(".worktree-%x.lock", sum[:8]))
}

// SpawnIntentPath is where a fresh spawn notes, before creating an
// endpoint, what it is about to create.
func (s Store) SpawnIntentPath(id string) string { return filepath.Join(s.Dir, id+".spawn-intent") }

// TaskIDs names the tasks whose records are in the state dir (regular
// state/<id>.meta files named by a valid id), in directory order; none when
// it cannot be read.
func (s Store) TaskIDs() []string {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".meta")
		if ok && ValidTaskID(id) && e.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	return ids
}

// Task is a loaded task record.
type Task struct {
	ID     string
	Path   string
	Raw    []byte // the exact bytes read, for byte-identical rollback
	Record Record
}

// LoadTask reads state/<id>.meta. A missing record is refused with a hint
// when the caller passed a window label (fm-<id>) for a task that exists.
// The binary's name (the first argument) goes in no sentence of it: a hint
// names a binary only as a command to run.
func (s Store) LoadTask(_, id string) (*Task, error) {
	path := s.MetaPath(id)
	data, err := ReadSmallFile(path, MaxRecordBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if real, ok := strings.CutPrefix(id, "fm-"); ok && real != "" {
				if _, err := os.Lstat(s.MetaPath(real)); err == nil {
					return nil, Errorf(ErrNoSuchTask, "'%s' is a window label, not a task id; pass the exact task id '%s'", id, real)
				}
			}
			return nil, WithHints(Errorf(ErrNoSuchTask, "no task '%s' in %s", id, s.Dir),
				"a task is named by its exact id; to list them: fm-control list",
				"start a task with fm-spawn "+strings.TrimPrefix(id, "fm-")+" "+SpawnFlags)
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, WithHints(Errorf(ErrBadRecord, "task %s's record %s cannot be read (permission denied); nothing was sent", id, path), "fix the record's permissions")
		}
		return nil, Errorf(ErrBadRecord, "task %s's record cannot be used: %w; nothing was sent", id, err)
	}
	return s.TaskFrom(id, data)
}

// TaskFrom is LoadTask for a record whose bytes were already read (list
// reads each record once, for the caller's scan and its own load).
func (s Store) TaskFrom(id string, data []byte) (*Task, error) {
	path := s.MetaPath(id)
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, Errorf(ErrBadRecord, "task %s's record %s is empty; nothing was sent", id, path)
	}
	rec, err := ParseRecord(data)
	if err != nil {
		return nil, Errorf(ErrBadRecord, "task %s's record %s is malformed: %w; nothing was sent", id, path, err)
	}
	return &Task{ID: id, Path: path, Raw: data, Record: rec}, nil
}

// identityKeys must each appear exactly once: a duplicated endpoint or harness
// line means two writers disagreed, and acting on either could hit the wrong agent.
var identityKeys = []string{KeyWindow, KeyWorktree}
var singleKeys = []string{KeyBackend, KeyEndpointTaskID, KeyHarness, KeyKind, KeyRemoteHost, KeyTmuxPane, KeyTmuxPanePID, KeyTmuxWindow, KeyTmuxServer, KeyPanePID}

// ValidateIdentity checks the record names exactly one endpoint and that the
// endpoint belongs to this task.
func (t *Task) ValidateIdentity() error {
	for _, k := range identityKeys {
		switch n := t.Record.Count(k); {
		case n == 0:
			return Errorf(ErrBadRecord, "task %s's record has no %s= line; refusing to act on an endpoint it does not name", t.ID, k)
		case n > 1:
			return Errorf(ErrBadRecord, "task %s's record has %d %s= lines; refusing to guess which endpoint is the agent's", t.ID, n, k)
		}
		if strings.TrimSpace(t.Record.Get(k)) == "" {
			return Errorf(ErrBadRecord, "task %s's record has an empty %s=; refusing to act on an endpoint it does not name", t.ID, k)
		}
	}
	for _, k := range singleKeys {
		if n := t.Record.Count(k); n > 1 {
			return Errorf(ErrBadRecord, "task %s's record has %d %s= lines; refusing to guess which one holds", t.ID, n, k)
		}
	}
	if owner, ok := t.Record.Lookup(KeyEndpointTaskID); ok && owner != t.ID {
		return Errorf(ErrForeignEndpoint, "task %s's recorded endpoint %s belongs to task %s (endpoint_task_id=%s); refusing to act on another task's agent", t.ID, phrase.Printable(t.Record.Window()), phrase.Printable(owner), phrase.Printable(owner))
	}
	return nil
}

// Lock is a held per-task lifecycle lock.
type Lock struct {
	f *os.File
}

// TryLock takes the lock at path without waiting. The lock is an flock on
// the file, so a crashed holder never leaves it stuck.
func TryLock(path string) (*Lock, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, false, WithHints(fmt.Errorf("lock file %s is a symlink, which fmctl never follows", path), "remove it (rm "+path+"), then try again")
		}
		return nil, false, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, true, nil
}

// Release drops the lock.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// LockTask takes the per-task lifecycle lock or refuses at once.
func (s Store) LockTask(id string) (*Lock, error) {
	l, ok, err := TryLock(s.LockPath(id))
	if err != nil {
		return nil, fmt.Errorf("cannot take task %s's lifecycle lock: %w", id, err)
	}
	if !ok {
		return nil, Errorf(ErrLockHeld, "another lifecycle action is already running for task %s; wait for it to finish, then look at the task again", id)
	}
	return l, nil
}

// BusyState returns the first word of state/<id>.busy-state, or "".
func (s Store) BusyState(id string) string {
	data, err := ReadSmallFile(s.BusyStatePath(id), 4096)
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// RetireBusy removes the busy record of an agent that is gone.
func (s Store) RetireBusy(id string) error {
	for _, p := range []string{s.BusyStatePath(id), s.BusyGenPath(id)} {
		if err := RemoveIfExists(p); err != nil {
			return fmt.Errorf("retire busy state of %s: %w", id, err)
		}
	}
	return nil
}

// LockInput takes task id's input lock, waiting up to wait. It is the one
// lock everything that types into the task's endpoint holds (fm-send, the
// control verbs, a launch line, and a relaunch from the old agent's stop
// until the new one is up), so no keys can reach the endpoint mid-change.
// The refusal names the real cause: a holder that did not finish, or a lock
// file that cannot be opened. Once taken, it waits out the rest of any gap
// the previous holder recorded (HoldInputUntil).
func (s Store) LockInput(id string, wait time.Duration) (*Lock, error) {
	l, err := WaitLock(s.SendLockPath(id), wait)
	switch {
	case err == nil:
		l.awaitHold()
		return l, nil
	case errors.Is(err, ErrLockHeld):
		return nil, Errorf(ErrLockHeld, "another delivery or lifecycle action on task %s still held its input lock after %s (FM_SEND_LOCK_WAIT); nothing was sent", id, wait)
	}
	return nil, fmt.Errorf("task %s's input lock cannot be taken: %w; nothing was sent", id, err)
}

// LockSends takes task id's send queue, waiting up to wait. A text send
// holds it from before it types until the agent's own record has judged
// the send, so two sends to one task follow each other and each is judged
// against its own baseline (an identical text sent meanwhile would read as
// a duplicate). Only a text send takes it, and always before the input
// lock: it lets the input lock go once its keys are out, so an interrupt,
// an exit or a key waits for a send's keys, never for the agent to record
// them.
func (s Store) LockSends(id string, wait time.Duration) (*Lock, error) {
	l, err := WaitLock(s.SendQueuePath(id), wait)
	switch {
	case err == nil:
		return l, nil
	case errors.Is(err, ErrLockHeld):
		return nil, Errorf(ErrLockHeld, "another text send to task %s was still waiting for the agent's record after %s (FM_SEND_LOCK_WAIT); nothing was sent", id, wait)
	}
	return nil, fmt.Errorf("task %s's send queue cannot be taken: %w; nothing was sent", id, err)
}

// WaitLock takes the lock at path, polling until timeout. Deliveries to one
// endpoint queue behind each other this way, so two messages never interleave.
func WaitLock(path string, timeout time.Duration) (*Lock, error) {
	deadline := time.Now().Add(timeout)
	// Polling (rather than a blocking flock that could not be abandoned at
	// the deadline) with a growing pause, so a queue of waiters stays cheap.
	pause := time.Millisecond
	for {
		l, ok, err := TryLock(path)
		if err != nil {
			return nil, err
		}
		if ok {
			return l, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s is still held after %s: %w", path, timeout, ErrLockHeld)
		}
		time.Sleep(pause)
		if pause < 16*time.Millisecond {
			pause *= 2
		}
	}
}
