//go:build !linux

package backends

// awaitExit returns at once where there is no wait that leaves the
// process unreaped to call (see reap_linux.go): it did not wait.
func awaitExit(int) bool { return false }
