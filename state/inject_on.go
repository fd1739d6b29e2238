//go:build fmfault

package state

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// FaultsBuilt says this build has the fault seams (-tags fmfault).
const FaultsBuilt = true

// Inject returns an injected error if FM_TEST_FAULT names step, and kills
// the process if FM_TEST_CRASH names it (see inject_off.go). These two are
// read here, not in config's table: they are a test build's seams, never a
// setting of a release binary.
func Inject(step string) error {
	crashPoint(step)
	return faultPoint(step)
}

func faultPoint(step string) error {
	if v := os.Getenv("FM_TEST_FAULT"); v != "" && matches(v, step) {
		return fmt.Errorf("injected fault at %s", step)
	}
	return nil
}

func crashPoint(step string) {
	if v := os.Getenv("FM_TEST_CRASH"); v != "" && matches(v, step) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

func matches(list, step string) bool {
	for _, s := range strings.Split(list, ",") {
		if s == step {
			return true
		}
	}
	return false
}
