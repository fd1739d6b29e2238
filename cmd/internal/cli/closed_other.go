//go:build !unix

package cli

// ReaderGone cannot tell without writing here: a stream learns it from
// its next write's error.
func ReaderGone(any) bool { return false }
