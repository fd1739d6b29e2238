//go:build !fmfault

package state

// The fault seams let tests fail or kill a process at a named step of a
// transaction. FM_TEST_FAULT=<step> makes that step return an error;
// FM_TEST_CRASH=<step> kills the process with SIGKILL there, as a power cut
// or an OOM kill would. Steps are named by the code that calls them
// ("journal:stopping", "write:t1.meta", "launch", ...).
//
// They exist only in a build with -tags fmfault (inject_on.go; make test
// builds its tests that way): a release binary has no variable that makes
// it kill itself or fail on purpose, and tests/faults proves make build's
// binaries lack them.

// FaultsBuilt says this build has the fault seams (-tags fmfault).
const FaultsBuilt = false

// Inject, faultPoint and crashPoint are no-ops without -tags fmfault.
func Inject(string) error { return nil }

func faultPoint(string) error { return nil }

func crashPoint(string) {}
