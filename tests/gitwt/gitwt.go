// Package gitwt makes a directory a git repository with one commit, as a
// task's worktree is (fm-spawn --worktree adopts only a git worktree root),
// with an identity and no user configuration.
package gitwt

import (
	"fmt"
	"os"
	"os/exec"
)

// Init creates dir if needed and commits once in a new repository there.
func Init(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, a := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "start"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, a...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=fm", "GIT_AUTHOR_EMAIL=fm@example.com", "GIT_COMMITTER_NAME=fm", "GIT_COMMITTER_EMAIL=fm@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v in %s: %v\n%s", a, dir, err, out)
		}
	}
	return nil
}
