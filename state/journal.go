package state

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Relaunch journal phases, in order. A journal whose phase is one of these
// (not complete, not failed:...) belongs to a transaction still running, or
// to one whose process died mid-way, which `fm-control recover` settles.
const (
	PhaseCheckpoint = "checkpoint"
	PhaseNoted      = "noted"
	PhaseStopping   = "stopping"
	PhaseExited     = "exited"
	PhaseLaunching  = "launching"
	PhaseComplete   = "complete"
	FailedPrefix    = "failed:"
)

const journalMagic = "v1"

// Journal is a transaction's durable log: a relaunch's,
// state/<id>.control-relaunch, or a teardown's, state/<id>.teardown (whose
// facts are all extra lines but worktree=, read back into the header).
type Journal struct {
	Header Record // task, backend, endpoint, worktree, kind, from_*, to_*
	Phase  string
	Extra  Record // phase-specific lines (checkpoint facts, exit_result, relaunch_tx, rollback, ...)
}

// JournalPaths are a relaunch journal and its companions.
type JournalPaths struct {
	Journal, MetaPrior, BriefPrior, Note string
}

// Journal returns the paths of task id's relaunch journal files.
func (s Store) Journal(id string) JournalPaths {
	base := filepath.Join(s.Dir, id+".control-relaunch")
	return JournalPaths{Journal: base, MetaPrior: base + ".meta-prior", BriefPrior: base + ".brief-prior", Note: base + ".note"}
}

// Bytes renders the journal: the magic line, the task line, phase, time, the
// header, then the extra lines.
func (j Journal) Bytes(now time.Time) ([]byte, error) {
	var r Record
	r.Entries = append(r.Entries, Entry{"task", j.Header.Get("task")}, Entry{"phase", j.Phase}, Entry{"ts", now.UTC().Format("2006-01-02T15:04:05Z")})
	for _, e := range j.Header.Entries {
		if e.Key != "task" {
			r.Entries = append(r.Entries, e)
		}
	}
	r.Entries = append(r.Entries, j.Extra.Entries...)
	body, err := r.Bytes()
	if err != nil {
		return nil, err
	}
	return append([]byte(journalMagic+"\n"), body...), nil
}

// WriteJournal atomically replaces the journal at path with j in phase.
// Fault seams: FM_TEST_FAULT=journal:<phase> fails the write,
// FM_TEST_CRASH=journal:<phase> dies before it and after:<phase> right after.
func WriteJournal(path string, j Journal) error {
	if err := Inject("journal:" + j.Phase); err != nil {
		return err
	}
	data, err := j.Bytes(time.Now())
	if err != nil {
		return fmt.Errorf("render journal: %w", err)
	}
	if err := WriteAtomic(path, data); err != nil {
		return err
	}
	crashPoint("after:" + j.Phase)
	return nil
}

// The journal's phase lines that more than one verb writes or reads.
const (
	JournalRollback   = "rollback"    // how a failed or torn transaction was settled
	JournalRelaunchTx = "relaunch_tx" // the transaction id fm-spawn wrote into the new record
	JournalReady      = "ready"       // the new agent's readiness
	JournalRecovered  = "recovered"   // settled by fm-control recover
)

// JournalHeader is a transaction's fixed facts, written at its start: the
// task as it was, and the profile it moves to.
type JournalHeader struct {
	Task, Backend, Endpoint, Worktree, Kind string
	FromHarness, FromModel, FromEffort      string
	ToHarness, ToModel, ToEffort            string
}

// journalHeaderKeys are the keys that belong to the header rather than a
// phase, in written order.
var journalHeaderKeys = []string{
	"task", "backend", "endpoint", "worktree", "kind",
	"from_harness", "from_model", "from_effort",
	"to_harness", "to_model", "to_effort",
}

// Record lays the header out as the journal writes it.
func (h JournalHeader) Record() Record {
	values := []string{h.Task, h.Backend, h.Endpoint, h.Worktree, h.Kind,
		h.FromHarness, h.FromModel, h.FromEffort, h.ToHarness, h.ToModel, h.ToEffort}
	r := Record{Entries: make([]Entry, len(values))}
	for i, v := range values {
		r.Entries[i] = Entry{Key: journalHeaderKeys[i], Value: v}
	}
	return r
}

// ToHarness is the harness the journal's transaction launches.
func (j Journal) ToHarness() string { return j.Header.Get("to_harness") }

// ReadJournal reads a journal back.
func ReadJournal(path string) (Journal, error) {
	data, err := ReadSmallFile(path, MaxRecordBytes)
	if err != nil {
		return Journal{}, err
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if string(first) != journalMagic {
		return Journal{}, fmt.Errorf("%s is not a v1 fmctl journal (relaunch or teardown)", path)
	}
	rec, err := ParseRecord(rest)
	if err != nil {
		return Journal{}, fmt.Errorf("%s: %w", path, err)
	}
	var j Journal
	for _, e := range rec.Entries {
		switch {
		case e.Key == "phase":
			j.Phase = e.Value
		case e.Key == "ts":
		case slices.Contains(journalHeaderKeys, e.Key):
			j.Header.Entries = append(j.Header.Entries, e)
		default:
			j.Extra.Entries = append(j.Extra.Entries, e)
		}
	}
	return j, nil
}

// Settled reports whether a journal phase ends its transaction: complete, or
// failed:<phase> after its rollback.
func Settled(phase string) bool {
	return phase == PhaseComplete || len(phase) > len(FailedPrefix) && strings.HasPrefix(phase, FailedPrefix)
}

// TornJournal reports the phase of task id's relaunch journal when it is
// left in a running phase. Called under the task's lock, where no
// transaction can be running, such a journal was left by a process that
// died; another lifecycle action must not proceed over it, because the
// next relaunch would replace the prior brief and record that its rollback
// restores. An unreadable journal is an error: it cannot be proven settled.
func (s Store) TornJournal(id string) (phase string, torn bool, err error) {
	path := s.Journal(id).Journal
	j, err := ReadJournal(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read relaunch journal %s: %w", path, err)
	}
	return j.Phase, !Settled(j.Phase), nil
}

// RefuseTorn refuses a lifecycle action on a task whose last relaunch was
// torn (see TornJournal), naming the way out.
func (s Store) RefuseTorn(id string) error {
	phase, torn, err := s.TornJournal(id)
	if err != nil {
		return Errorf(ErrTornRelaunch, "task %s's relaunch journal cannot be read (%w), so a torn relaunch cannot be ruled out; inspect it before acting", id, err)
	}
	if !torn {
		return s.RefuseTornTeardown(id)
	}
	// recover needs the record to roll back against; without one, only a
	// person who has read the journal can retire it.
	if _, err := os.Lstat(s.MetaPath(id)); errors.Is(err, fs.ErrNotExist) {
		return Errorf(ErrTornRelaunch, "task %s's last relaunch was torn in phase %s, and its record is gone, so fm-control recover cannot settle it; read %s and its companions, then remove them before launching %s again", id, phase, s.Journal(id).Journal, id)
	}
	return Errorf(ErrTornRelaunch, "task %s's last relaunch was torn in phase %s (its process died); settle it with fm-control recover %s before another relaunch or launch", id, phase, id)
}
