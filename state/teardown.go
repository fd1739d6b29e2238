package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Teardown journal phases, in order. Each is written before its step is
// taken, so a journal left in one names the step a dead process was in (or
// about to begin), which `fm-control recover` finishes or undoes. Between
// judged and closing comes PhaseStopping, relaunch's word for the same step.
const (
	PhaseJudged    = "judged"    // the work was judged landed (or --force recorded what it discards); nothing touched
	PhaseClosing   = "closing"   // the agent is gone; its endpoint is being closed
	PhaseRemoving  = "removing"  // the worktree and branch are being removed
	PhaseArchiving = "archiving" // the records are moving into the archive
)

// TeardownPhases lists the teardown's phases in order, complete last.
func TeardownPhases() []string {
	return []string{PhaseJudged, PhaseStopping, PhaseClosing, PhaseRemoving, PhaseArchiving, PhaseComplete}
}

// The teardown journal's own lines (beside the task's worktree= and
// project=, spelled by the meta keys).
const (
	JournalBranch   = "branch"       // the branch to delete; "" for none (detached, main checkout)
	JournalKeep     = "keep"         // why the worktree stays: main-checkout, shared, no-project; "" removes it
	JournalArchive  = "archive"      // the archive directory the records move into
	JournalForce    = "force"        // yes: --force, the work below is discarded
	JournalDiscards = "discards"     // what --force discards, in words
	JournalAgent    = "agent"        // how the agent ended: stopped, already-stopped, already-gone, killed
	JournalSecond   = "home_records" // yes: the worktree is a secondmate's home, archived with the task
)

// TeardownPath is task id's teardown journal, state/<id>.teardown.
func (s Store) TeardownPath(id string) string { return filepath.Join(s.Dir, id+".teardown") }

// ArchivePath is where task id's records go when it is torn down at at:
// state/archive/<id>-<UTC time>/, which list and completion never read. An
// earlier teardown of the same id in the same second keeps its directory:
// this one takes the next free <dir>.<n>, so no archived record is ever
// replaced.
func (s Store) ArchivePath(id string, at time.Time) string {
	base := filepath.Join(s.Dir, "archive", id+"-"+at.UTC().Format("20060102T150405Z"))
	dir := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			return dir
		}
		dir = fmt.Sprintf("%s.%d", base, n)
	}
}

// ErrTornTeardown: a teardown's process died mid-way.
var ErrTornTeardown = errors.New("torn teardown")

// RefuseTornTeardown refuses an action on a task whose teardown was left
// in a running phase (called under the task's lock, where none can run).
func (s Store) RefuseTornTeardown(id string) error {
	path := s.TeardownPath(id)
	j, err := ReadJournal(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return Errorf(ErrTornTeardown, "task %s's teardown journal %s cannot be read (%w), so a torn teardown cannot be ruled out; inspect it before acting", id, path, err)
	}
	if Settled(j.Phase) {
		return nil
	}
	return Errorf(ErrTornTeardown, "task %s's teardown was torn in phase %s (its process died); settle it with fm-control recover %s", id, j.Phase, id)
}

// ArchiveTask moves task id's records into dir, never through a symlink:
// every state/<id>.* file but the teardown journal (which moves last, with
// MoveJournal), then data/<id>/ as dir/data, then the record itself. It can
// be run again after a crash: what has moved is not there to move twice.
// It returns the names it moved.
func (s Store) ArchiveTask(id, dataDir, dir string) ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Dir, err)
	}
	// A task id may hold dots, so t1's prefix also starts every file of a
	// task t1.x: those files are t1.x's, never t1's to move.
	var longer []string
	for _, e := range entries {
		if other, ok := strings.CutSuffix(e.Name(), ".meta"); ok && other != id && strings.HasPrefix(other, id+".") && ValidTaskID(other) {
			longer = append(longer, other+".")
		}
	}
	var moves [][2]string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, id+".") && name != id+".teardown" && name != id+".meta" && !hasAnyPrefix(name, longer) {
			moves = append(moves, [2]string{filepath.Join(s.Dir, name), name})
		}
	}
	// The record goes last: until it moves, the task is still listed and
	// its teardown's endpoint can still be resolved.
	moves = append(moves, [2]string{filepath.Join(dataDir, id), "data"}, [2]string{s.MetaPath(id), id + ".meta"})
	moved, err := s.ArchiveInto(dir, moves)
	syncDir(s.Dir)
	return moved, err
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// ArchiveInto moves each [from, name] pair to dir/name, creating dir (which
// must lie under the state dir with no symlink on the way); a from that is
// already gone is skipped. rename moves a symlink itself, never what it
// points at.
func (s Store) ArchiveInto(dir string, moves [][2]string) ([]string, error) {
	if err := NoSymlinkUnder(s.Dir, dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create archive %s: %w", dir, err)
	}
	var moved []string
	for _, m := range moves {
		from, to := m[0], filepath.Join(dir, m[1])
		if _, err := os.Lstat(from); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := Inject("archive:" + m[1]); err != nil {
			return moved, err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return moved, err
		}
		if err := os.Rename(from, to); err != nil {
			return moved, fmt.Errorf("move %s into the archive: %w", from, err)
		}
		moved = append(moved, m[1])
	}
	return moved, nil
}

// MoveJournal moves a completed teardown journal into its archive, ending
// the teardown: the id is free again.
func (s Store) MoveJournal(id, dir string) error {
	from := s.TeardownPath(id)
	if _, err := os.Lstat(from); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.Rename(from, filepath.Join(dir, id+".teardown")); err != nil {
		return fmt.Errorf("move %s into the archive: %w", from, err)
	}
	syncDir(s.Dir)
	return nil
}
