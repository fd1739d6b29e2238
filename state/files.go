package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/google/renameio/v2"
)

// MaxRecordBytes bounds every record read: a task record is a few hundred
// bytes, so anything this large is not one and is refused rather than parsed.
const MaxRecordBytes = 64 << 10

// MaxBriefBytes bounds a brief or progress note read: instructions run to
// kilobytes, so anything this large is refused rather than copied around.
const MaxBriefBytes = 4 << 20

// ErrNotExist reports an absent file.
var ErrNotExist = fs.ErrNotExist

// ReadSmallFile reads a regular file of at most limit bytes without following
// a symlink at its final component.
func ReadSmallFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, WithHints(fmt.Errorf("%s is a symlink; records are read only from regular files", path), "put the file itself there, or remove the link")
		}
		return nil, err
	}
	return readRegular(f, path, limit)
}

// ReadUserFile reads a file the user named on a command line (fm-spawn's
// --brief). It is the user's file, not one of fmctl's records, so a symlink
// to it is followed; but, as with ReadSmallFile, it must be a regular file of
// at most limit bytes, and it is opened without blocking, so a FIFO or a
// device is refused rather than waited on or read without end.
func ReadUserFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return readRegular(f, path, limit)
}

// readRegular reads the open file f, closing it, if it is a regular file
// of at most limit bytes.
func readRegular(f *os.File, path string, limit int64) ([]byte, error) {
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, describeMode(info.Mode()))
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, larger than the %d fmctl reads from it", path, info.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s grew past the %d bytes fmctl reads from it", path, limit)
	}
	return data, nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.String()
}

// WriteAtomic replaces path with data: a temp file in the same directory,
// fsynced, then renamed over the old one, then the directory fsynced. A crash
// at any point leaves either the old file whole or the new one whole.
func WriteAtomic(path string, data []byte) error {
	return writeAtomic(path, data, renameio.WithPermissions(0o644), renameio.WithExistingPermissions())
}

// WriteSecret is WriteAtomic for a file only its owner may read: mode 0600
// whatever the file it replaces had.
func WriteSecret(path string, data []byte) error {
	return writeAtomic(path, data, renameio.WithPermissions(0o600))
}

// WriteReport is WriteAtomic without the fsyncs, for an agent's own report
// (state/<id>.agent-state), which its hook writes on every prompt and turn
// end while the agent waits: readers still see the old file whole or the new
// one whole, and a crash that loses the newest report loses only what the
// agent's next event, or its record, says again. Two fsyncs on a loaded
// disk held the agent longer than the rest of the hook.
func WriteReport(path string, data []byte) error {
	if err := checkWritable(path); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("create temp file for %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		crashPoint("before-rename:" + filepath.Base(path))
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}

// checkWritable is what every write of a file of fmctl's checks first: the
// fault point (tests), and no symlink in the file's place.
func checkWritable(path string) error {
	if err := faultPoint("write:" + filepath.Base(path)); err != nil {
		return err
	}
	// A symlink in the file's place would be replaced by a copy that takes
	// the link target's mode and leaves the target stale; fmctl's files are
	// never links, so one there is refused rather than resolved.
	if info, err := os.Lstat(path); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symlink; fmctl never reads or writes its files through one, so remove it (nothing was written)", path)
	}
	return nil
}

func writeAtomic(path string, data []byte, opts ...renameio.Option) error {
	if err := checkWritable(path); err != nil {
		return err
	}
	pf, err := renameio.NewPendingFile(path, opts...)
	if err != nil {
		return fmt.Errorf("create temp file for %s: %w", path, err)
	}
	defer pf.Cleanup()
	if _, err := pf.Write(data); err != nil {
		return fmt.Errorf("write temp file for %s: %w", path, err)
	}
	crashPoint("before-rename:" + filepath.Base(path))
	if err := pf.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// RemoveIfExists deletes path, treating absence as success.
func RemoveIfExists(path string) error {
	err := os.Remove(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// NoSymlinkUnder refuses a path any of whose components below root is a
// symlink: deleting or reading through one would reach a file outside the
// worktree or state dir fmctl owns. Components that do not exist end the
// check (nothing further can be a link). root itself is trusted as given.
func NoSymlinkUnder(root, path string) error {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%s is not under %s", path, root)
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		info, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("stat %s: %w", cur, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symlink; refusing to follow it", cur)
		}
	}
	return nil
}

// RegularUnder checks that path is a regular file reached from root without
// any symlink (see NoSymlinkUnder): a brief linked to another file would be
// read, and rewritten, in that file's place.
func RegularUnder(root, path string) error {
	if err := NoSymlinkUnder(root, path); err != nil {
		return err
	}
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", path, describeMode(info.Mode()))
	}
	return nil
}
