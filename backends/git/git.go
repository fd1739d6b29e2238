// Package git runs git for fmctl: a worktree's top, status and branches,
// through the same Runner and bound as every other external program.
package git

import (
	"context"
	"strings"
	"time"

	"fmctl/backends"
)

// gitLocationEnv are the variables that would point git at another
// repository than the directory it is asked about (an agent's shell or a
// hook may have exported them).
var gitLocationEnv = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_CEILING_DIRECTORIES"}

// Run runs `git -C dir args...` through r, bounded by limit (FM_GIT_TIMEOUT),
// with the repository-location variables dropped, and returns trimmed stdout.
func Run(ctx context.Context, r backends.Runner, limit time.Duration, dir string, args ...string) (string, error) {
	b := backends.Bounded{Inner: r, Timeout: limit}
	out, err := b.Run(ctx, backends.Cmd{Path: "git", Args: append([]string{"-C", dir}, args...), Unset: gitLocationEnv})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out.Stdout)), nil
}
