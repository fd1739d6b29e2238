package backends

import "path/filepath"

// SameDirKey is the form two spellings of one directory share: absolute,
// cleaned, symlinks resolved where they resolve.
func SameDirKey(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}
