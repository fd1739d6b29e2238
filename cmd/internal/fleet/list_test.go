package fleet

import (
	"bytes"
	"testing"
)

// Into a pipe list --all-hosts prints list's own key=value lines, one a
// task, never the table: a reachable host's tasks, a host with none, a
// record error, and the stale tasks of a host that did not answer.
func TestListLinesForAPipe(t *testing.T) {
	hosts := []HostTasks{
		{Host: LocalHost, Reachable: true, Tasks: []map[string]any{
			{"id": "t2", "harness": "codex", "kind": "scout", "backend": "tmux", "endpoint": "my session:fm-t2", "state": "dead", "activity": "dead", "journal": "none"},
			{"id": "bad", "error": "task bad's record is malformed"},
		}},
		{Host: "gpu1", Reachable: true, Tasks: []map[string]any{}},
		{Host: "gpu2", Error: "ssh could not reach host gpu2", Stale: true, SeenAt: "2026-01-02T03:04:05Z", Tasks: []map[string]any{
			{"id": "t1", "harness": "claude", "kind": "ship", "backend": "tmux", "endpoint": "fmses:fm-t1", "state": "alive", "activity": "idle", "journal": "none"},
		}},
		{Host: "shut", Error: "ssh could not reach host shut", Tasks: []map[string]any{}},
	}
	var out bytes.Buffer
	printLines(&out, hosts)
	want := `bad: host=local error="task bad's record is malformed"
t2: host=local harness=codex kind=scout backend=tmux endpoint="my session:fm-t2" state=dead activity=dead journal=none
gpu1: host=gpu1 tasks=0
gpu2/t1: host=gpu2 harness=claude kind=ship backend=tmux endpoint=fmses:fm-t1 state=unreachable activity=stale journal=none seen_at=2026-01-02T03:04:05Z error="ssh could not reach host gpu2"
shut: host=shut state=unreachable error="ssh could not reach host shut"
`
	if got := out.String(); got != want {
		t.Fatalf("printLines =\n%s\nwant\n%s", got, want)
	}
}
