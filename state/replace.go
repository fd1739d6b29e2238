package state

import (
	"fmt"
	"path/filepath"
)

// ReplaceRecord rewrites a record whose current bytes are prior. The prior
// bytes are kept beside it (<path>.prior) until the new record has been
// committed, so a crash mid-way leaves either the old record, or the new one
// with the old one next to it to compare or restore.
func ReplaceRecord(path string, prior, data []byte) error {
	keep := path + ".prior"
	if err := WriteAtomic(keep, prior); err != nil {
		return fmt.Errorf("keep the prior record: %w", err)
	}
	if err := WriteAtomic(path, data); err != nil {
		_ = RemoveIfExists(keep)
		return err
	}
	crashPoint("after-replace:" + filepath.Base(path))
	return RemoveIfExists(keep)
}
