package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The audit trail: state/<id>.audit holds one line per attempt to change
// task id (and per refused attempt of any kind on it), appended by the
// binaries' authority gate. A line is written whole by one write(2) on an
// O_APPEND descriptor, so concurrent appenders never interleave inside it;
// each appender holds an flock on the file itself, and the trim that bounds
// it replaces the file under that flock, so an appender that waited on the
// replaced file sees it is stale and opens the new one: no line is lost.

// AuditPath is task id's audit trail.
func (s Store) AuditPath(id string) string { return filepath.Join(s.Dir, id+".audit") }

// auditLockWait bounds the wait for the trail's flock: its holders append
// one line or trim a file of at most the bound, both well under this.
const auditLockWait = 2 * time.Second

// AppendAudit appends line (no newline in it) to task id's audit trail,
// never through a symlink. When the file would pass max bytes, its oldest
// lines are dropped first, keeping about half of max, by an atomic replace;
// max 0 keeps the whole trail.
func (s Store) AppendAudit(id, line string, max int64) error {
	if err := CheckValue(line); err != nil {
		return fmt.Errorf("audit line for %s: %w", id, err)
	}
	p := s.AuditPath(id)
	deadline := time.Now().Add(auditLockWait)
	for {
		done, err := appendOnce(p, line, max, deadline)
		if err != nil || done {
			return err
		}
	}
}

// appendOnce opens and locks the trail, and appends unless the file it
// locked is no longer the one at p (a trim replaced it, or this call just
// trimmed it): then the caller opens the new one.
func appendOnce(p, line string, max int64, deadline time.Time) (bool, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return false, fmt.Errorf("open %s: %w", p, err)
	}
	defer f.Close()
	if err := flockUntil(f, deadline); err != nil {
		return false, fmt.Errorf("lock %s: %w", p, err)
	}
	held, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", p, err)
	}
	if now, err := os.Lstat(p); err != nil || !os.SameFile(held, now) {
		return false, nil
	}
	if max > 0 && held.Size()+int64(len(line))+1 > max {
		return false, trimAudit(p, max/2)
	}
	if _, err := f.Write([]byte(line + "\n")); err != nil {
		return false, fmt.Errorf("append to %s: %w", p, err)
	}
	return true, nil
}

// flockUntil takes an exclusive flock on f, polling (a blocking flock
// could not be abandoned at the deadline).
func flockUntil(f *os.File, deadline time.Time) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil || !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return ErrLockHeld
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// trimAudit keeps the newest whole lines of the trail at p that fit in keep
// bytes.
func trimAudit(p string, keep int64) error {
	data, err := ReadSmallFile(p, maxAuditRead)
	if err != nil {
		return fmt.Errorf("read %s to trim it: %w", p, err)
	}
	if int64(len(data)) > keep {
		data = data[int64(len(data))-keep:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		} else {
			data = nil
		}
	}
	if err := WriteSecret(p, data); err != nil {
		return fmt.Errorf("trim %s: %w", p, err)
	}
	return nil
}

// maxAuditRead bounds reading a trail, whatever bound it was kept under.
const maxAuditRead = 1 << 30

// ReadAudit returns task id's audit trail; none is an empty trail.
func (s Store) ReadAudit(id string) ([]byte, error) {
	data, err := ReadSmallFile(s.AuditPath(id), maxAuditRead)
	if os.IsNotExist(err) {
		return nil, nil
	}
	return data, err
}
