package records

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The testdata files are `.dump session message part` of a real opencode
// 1.18.33 database, driven by hand against the stub model (see
// tests/captures/notes-opencode-pi-gemini.md). One run, launched the way fmctl
// launches it (--prompt), then typed, in order: "hello one" (400), a pasted
// three-line message with Enter right after the paste (submitted; opencode
// shows "[Pasted ~3 lines]" and records the text with a trailing space),
// "pasted single", "pasted two", "abc" (all 400), /help (a dialog, closed
// with Escape), /nosuchcmd (refused: "No matching items", cleared with
// Escape), "please fmhang now" (held), "queued while busy" (QUEUED), two
// Escapes (interrupted; the queued message stays recorded but is never
// sent), "fmhang two", two Escapes. Copies were taken at each step:
// after400, busy, busy-queued, interrupted-queued and interrupted. relaunch
// is the same database after two more launches in the worktree: "fmhang
// three" and "fmhang four" (C-c quit opencode mid-turn), then a new session
// with "fmhang five" ended by /exit mid-turn.
const opencodeWorktree = "/tmp/opg/o2/wt"

// opencodeHome loads a dump into HOME/.local/share/opencode/opencode.db,
// then runs the extra SQL statements.
func opencodeHome(t *testing.T, dump string, extra ...string) string {
	t.Helper()
	return sqliteHome(t, "opencode", dump, extra...)
}

// sqliteHome loads testdata/<app>/<dump>.sql into
// HOME/.local/share/<app>/<app>.db, where opencode and its fork kilo keep
// their database, then runs the extra SQL statements. kilo's dumps hold only
// their rows: kilo 7.7.7's `.dump` schema is byte for byte opencode
// 1.18.33's, which is what lets one reader serve both, so its tables come
// from an opencode dump with the rows left out.
func sqliteHome(t *testing.T, app, dump string, extra ...string) string {
	t.Helper()
	var schema []byte
	if app == "kilo" {
		schema = opencodeSchema(t)
	}
	home := t.TempDir()
	loadSQLite(t, filepath.Join(home, ".local", "share", app, app+".db"), schema,
		filepath.Join("testdata", app, dump+".sql"), extra...)
	return home
}

// loadSQLite creates the database db (and its folder) from schema and a
// committed dump, then runs the extra SQL statements; it skips the test
// where the sqlite3 CLI is missing.
func loadSQLite(t *testing.T, db string, schema []byte, dump string, extra ...string) {
	t.Helper()
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("the sqlite3 CLI is not installed (apt-get install sqlite3); .ci/run installs it")
	}
	sql, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sqlite3", db)
	cmd.Stdin = strings.NewReader(string(schema) + string(sql) + strings.Join(extra, ";\n") + ";\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("load %s: %v\n%s", dump, err, out)
	}
}

// opencodeSchema is an opencode dump without its INSERT rows: the PRAGMA,
// the transaction and every CREATE statement.
func opencodeSchema(t *testing.T) []byte {
	t.Helper()
	dump, err := os.ReadFile(filepath.Join("testdata", "opencode", "after400.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, line := range strings.SplitAfter(string(dump), "\n") {
		if !strings.HasPrefix(line, "INSERT INTO ") {
			out = append(out, line...)
		}
	}
	return out
}

var opencodeTyped = []string{
	"Read the brief at /x/brief.md and follow it exactly.", "hello one",
	"line one\nline two\n  indented three ", "pasted single", "pasted two", "abc",
	"please fmhang now", "queued while busy", "fmhang two",
}

func TestOpencodeRecords(t *testing.T) {
	checkRecordDumps(t, "opencode", opencodeWorktree, opencodeTyped, []recordDump{
		{"after400", 2, false},
		{"busy", 7, true},
		{"busy-queued", 8, true},
		{"interrupted-queued", 8, false},
		{"interrupted", 9, false},
	})
}

// recordDump is one committed database dump: how many of the messages
// typed in its run it records, and whether its last turn is running.
type recordDump struct {
	dump    string
	n       int
	running bool
}

// checkRecordDumps reads each dump of app (opencode or its fork kilo) as
// the harness's reader does and holds it to the typed messages it records
// and its turn.
func checkRecordDumps(t *testing.T, app, worktree string, typed []string, dumps []recordDump) {
	t.Helper()
	for _, c := range dumps {
		t.Run(c.dump, func(t *testing.T) {
			msgs, running := readRecord(t, app, Where{Home: sqliteHome(t, app, c.dump), Worktree: worktree})
			if want := typed[:c.n]; !reflect.DeepEqual(msgs, want) {
				t.Errorf("UserMessages = %q, want %q", msgs, want)
			}
			if running != c.running {
				t.Errorf("TurnRunning = %v, want %v", running, c.running)
			}
		})
	}
}

// checkNewestSessionTurn reopens the last turn of each of two sessions in
// app's relaunch dump in turn: only the newer session's may read as running.
func checkNewestSessionTurn(t *testing.T, app, worktree, oldSession, newSession string) string {
	t.Helper()
	home := sqliteHome(t, app, "relaunch", reopenTurn(oldSession))
	if _, running := readRecord(t, app, Where{Home: home, Worktree: worktree}); running {
		t.Error("an unfinished turn in an older session read as running")
	}
	home = sqliteHome(t, app, "relaunch", reopenTurn(newSession))
	if _, running := readRecord(t, app, Where{Home: home, Worktree: worktree}); !running {
		t.Error("an unfinished turn in the newest session did not read as running")
	}
	return home
}

// reopenTurn is SQL that takes the completion time off a session's
// assistant messages, as a database copied mid-turn holds them.
func reopenTurn(session string) string {
	return `UPDATE message SET data = json_remove(data, '$.time.completed')
		WHERE json_extract(data, '$.role') = 'assistant' AND session_id = '` + session + `'`
}

// A relaunch starts a new session: messages come from every session of the
// worktree, and only the newest session's last turn counts.
func TestOpencodeRelaunch(t *testing.T) {
	want := append(append([]string{}, opencodeTyped...), "fmhang three", "fmhang four", "fmhang five")
	msgs, running := readRecord(t, "opencode", Where{Home: opencodeHome(t, "relaunch"), Worktree: opencodeWorktree})
	if !reflect.DeepEqual(msgs, want) || running {
		t.Errorf("got %q running=%v, want %q running=false", msgs, running, want)
	}
	checkNewestSessionTurn(t, "opencode", opencodeWorktree, "ses_dc7806bd3ffenwsqve1NLdML2N", "ses_dc77ea5a1ffeihWiQ7jj9IEGDX")
}

// Parts opencode adds itself (attached file contents) are marked synthetic;
// a subagent's session has a parent and its prompts are not the user's.
func TestOpencodeSkipsSyntheticPartsAndSubagents(t *testing.T) {
	home := opencodeHome(t, "after400",
		`INSERT INTO part SELECT id || 'z', message_id, session_id, time_created, time_updated,
			json_object('type', 'text', 'text', 'FILE CONTENTS', 'synthetic', json('true')) FROM part`,
		`INSERT INTO session SELECT id || 'child', project_id, workspace_id, id, slug, directory, path, title,
			version, share_url, summary_additions, summary_deletions, summary_files, summary_diffs, metadata, cost,
			tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission,
			agent, model, time_created + 1, time_updated, time_compacting, time_archived FROM session`,
		`INSERT INTO message SELECT id || 'child', session_id || 'child', time_created, time_updated, data FROM message`,
		`INSERT INTO part SELECT id || 'child', message_id || 'child', session_id || 'child', time_created, time_updated, data FROM part`)
	msgs, _ := readRecord(t, "opencode", Where{Home: home, Worktree: opencodeWorktree})
	if want := opencodeTyped[:2]; !reflect.DeepEqual(msgs, want) {
		t.Errorf("UserMessages = %q, want %q", msgs, want)
	}
}

func TestOpencodeOtherWorktreeAndNoDatabase(t *testing.T) {
	msgs, running := readRecord(t, "opencode", Where{Home: opencodeHome(t, "busy"), Worktree: "/elsewhere"})
	if len(msgs) != 0 || running {
		t.Errorf("another worktree's session was read: %q running=%v", msgs, running)
	}
	msgs, running = readRecord(t, "opencode", Where{Home: t.TempDir(), Worktree: opencodeWorktree})
	if len(msgs) != 0 || running {
		t.Errorf("no database: %q running=%v", msgs, running)
	}
}

// execSQLite is the sqlite3 CLI the product reaches through its runner
// (backends/sqlite), called directly: this package sits below backends.
func execSQLite(ctx context.Context, db, query string) ([]byte, error) {
	return exec.CommandContext(ctx, "sqlite3", "-readonly", "-json", "-cmd", ".timeout 2000", db, query).Output()
}

// How each assistant message ends its turn, as 1.18.33 records it: an
// answer's finish, an abort, an API error, a step that goes on to its tool
// calls, and, interrupted while it waited out a retry of a failing model
// call, neither a finish nor an error (tier, issue 38).
func TestOpencodeTurnEnds(t *testing.T) {
	done := []byte("1765000000000")
	for _, c := range []struct {
		row   opencodeRow
		end   Outcome
		ended bool
	}{
		{opencodeRow{Completed: done, Finish: "stop"}, Completed, true},
		{opencodeRow{Completed: done, Finish: "stop", ErrorName: opencodeAborted}, Cancelled, true},
		{opencodeRow{Completed: done, ErrorName: "APIError", ErrorText: "overloaded"}, Failed, true},
		{opencodeRow{Completed: done, Finish: "tool-calls"}, "", false},
		{opencodeRow{Completed: done}, Cancelled, true},
		{opencodeRow{Finish: "stop"}, "", false},
	} {
		end, ok := c.row.turnEnd()
		if ok != c.ended || end.End != c.end {
			t.Errorf("%+v: turn end %v %q, want %v %q", c.row, ok, end.End, c.ended, c.end)
		}
	}
}
