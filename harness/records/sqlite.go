package records

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// sqliteTimeout bounds one sqlite3 call; a WAL read never waits for the
// writer, so this only trips on a wedged machine.
const sqliteTimeout = 10 * time.Second

// queryRows runs one read-only query on an agent's database with the
// Where's SQLite reader (sqlite3 -json) and decodes its rows into rows;
// what names the database in errors ("opencode database", "cline's hub
// events"). No rows leaves rows untouched: sqlite3 prints nothing for them.
func queryRows(w Where, what, db, query string, rows any) error {
	if w.Query == nil {
		return fmt.Errorf("read %s %s: no SQLite reader was given", what, db)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sqliteTimeout)
	defer cancel()
	out, err := w.Query(ctx, db, query)
	if err != nil {
		return fmt.Errorf("read %s %s: %w", what, db, err)
	}
	if len(strings.TrimSpace(string(out))) == 0 {
		return nil
	}
	if err := json.Unmarshal(out, rows); err != nil {
		return fmt.Errorf("decode %s %s: %w", what, db, err)
	}
	return nil
}
