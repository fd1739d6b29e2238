package state

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
)

// PeekRecord reads task id's record into buf (grown as needed, up to
// MaxRecordBytes) with three system calls (open, read, close) and no parse: a reader that
// looks at one key of every record in a home (authority's caller check,
// on every invocation) pays microseconds per record, not a parse and a
// stat. It never follows a symlink; what it returns is unvalidated bytes,
// for LastValue, and a reader acting on a record still loads it.
func (s Store) PeekRecord(id string, buf []byte) ([]byte, error) {
	path := s.MetaPath(id)
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) > MaxRecordBytes {
			return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxRecordBytes)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, max(cap(buf), 4096))...)[:len(buf)]
		}
		want := cap(buf) - len(buf)
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		buf = buf[:len(buf)+n]
		// A regular file reads short only at its end, so a short read
		// saves the read that would return 0.
		if n < want && len(buf) <= MaxRecordBytes {
			return buf, nil
		}
	}
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
