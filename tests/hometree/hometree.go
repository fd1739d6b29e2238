// Package hometree lists a directory tree exactly (path, mode, size, bytes,
// link target), so a test can show a read-only verb left an fmctl home
// byte-identical, lock files included.
package hometree

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Listing is one line per entry under root, in walk order.
func Listing(root string) (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(&b, "%s %s %d", rel, info.Mode(), info.Size())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, " -> %s", target)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteString("\n")
		return nil
	})
	return b.String(), err
}
