// Package sqlite reads an agent's own SQLite database through the sqlite3
// CLI.
package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"fmctl/backends"
)

// Query returns a read-only query against a SQLite database through
// the sqlite3 CLI, its rows printed as one JSON array. An agent's own
// database (opencode's) is read this way rather than by linking a SQLite
// driver: the CLI reads a live WAL database without waiting on its writer,
// and the binaries stay static and cgo-free.
func Query(r backends.Runner) func(ctx context.Context, db, query string) ([]byte, error) {
	return func(ctx context.Context, db, query string) ([]byte, error) {
		out, err := r.Run(ctx, backends.Cmd{Path: "sqlite3", Args: []string{"-readonly", "-json", "-cmd", ".timeout 2000", db, query}})
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("the sqlite3 CLI is not installed (apt-get install sqlite3): %w", err)
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite3 %s: %s: %w", db, backends.StderrOf(err), err)
		}
		return out.Stdout, nil
	}
}
