package state

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// The fault seams let tests fail or kill a process at a named step of a
// transaction. FM_TEST_FAULT=<step> makes that step return an error;
// FM_TEST_CRASH=<step> kills the process with SIGKILL there, as a power cut
// or an OOM kill would. Steps are named by the code that calls them
// ("journal:stopping", "write:t1.meta", "launch", ...). Unset in production.

// Fault returns an injected error if FM_TEST_FAULT names step, and kills
// the process if FM_TEST_CRASH names it.
func Fault(step string) error {
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
