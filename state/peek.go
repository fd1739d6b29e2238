package state

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"syscall"
)

// PeekRecord reads task id's record without parsing it: a reader that
// looks at one key of every record in a home (authority's caller check, on
// every invocation) needs only the bytes, for LastValue; a reader acting on
// a record still loads it. It never follows a symlink, and it reads only a
// regular file (a FIFO planted in its place would block the read). buf is
// reused when it is large enough.
func (s Store) PeekRecord(id string, buf []byte) ([]byte, error) {
	path := s.MetaPath(id)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	b := bytes.NewBuffer(buf[:0])
	if _, err := b.ReadFrom(io.LimitReader(f, MaxRecordBytes+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if b.Len() > MaxRecordBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxRecordBytes)
	}
	return b.Bytes(), nil
}

// LastValue is the value of key's last line in a record's bytes (readers
// take the last line, as Record.Get does), or "".
func LastValue(data []byte, key string) string {
	prefix := []byte(key + "=")
	for end := len(data); end > 0; {
		start := bytes.LastIndexByte(data[:end], '\n') + 1
		if line := data[start:end]; bytes.HasPrefix(line, prefix) {
			return string(line[len(prefix):])
		}
		end = start - 1
		if end < 0 {
			break
		}
	}
	return ""
}
