package realtmux

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// 50 concurrent fm-send / fm-control interrupt / fm-control exit calls on one
// task: lifecycle verbs serialise on the per-task lock (losers are refused at
// once with the lock message), every message arrives whole and never
// interleaved with another, and the record is never touched.
func TestFiftyConcurrentCallsSerializeAndNeverInterleave(t *testing.T) {
	s := newServer(t)
	a := s.startAgent("t1", "claude", agentEnv("FAKEAGENT_IGNORE_EXIT=1"))
	metaPath := filepath.Join(s.home, "state", "t1.meta")
	before, err := os.ReadFile(metaPath)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"FM_CONTROL_EXIT_WAIT=0.3", "FM_CONTROL_POLL=0.02"}
	type call struct {
		kind, msg string
		r         result
	}
	calls := make([]call, 50)
	for i := range calls {
		switch {
		case i%5 == 3:
			calls[i].kind = "interrupt"
		case i%5 == 4:
			calls[i].kind = "exit"
		default:
			calls[i].kind = "send"
			// long enough that a second writer could land inside it
			calls[i].msg = fmt.Sprintf("message-%02d %s end-%02d", i, strings.Repeat(strconv.Itoa(i%10), 40), i)
		}
	}
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func(c *call) {
			defer wg.Done()
			switch c.kind {
			case "send":
				c.r = s.run("", env, "fm-send", "t1", c.msg)
			case "interrupt":
				c.r = s.run("", env, "fm-control", "interrupt", "t1")
			case "exit":
				c.r = s.run("", env, "fm-control", "exit", "t1")
			}
		}(&calls[i])
	}
	wg.Wait()
	a.quiet()

	const lockMsg = "another lifecycle action is already running for task t1"
	refused, exitsTyped := 0, 0
	for _, c := range calls {
		switch c.kind {
		case "send":
			if c.r.code != 0 {
				t.Errorf("fm-send %q: %s", c.msg, c.r)
			}
		case "interrupt":
			if c.r.code == 0 && strings.HasPrefix(c.r.stdout, "interrupt-delivered t1 harness=claude") {
				continue
			}
			if c.r.code != 1 || !strings.Contains(c.r.stderr, lockMsg) {
				t.Errorf("interrupt: want success or the lock refusal, got %s", c.r)
			}
			refused++
		case "exit":
			switch {
			case c.r.code == 1 && strings.Contains(c.r.stderr, "exit=unconfirmed"):
				exitsTyped++
			case c.r.code == 1 && strings.Contains(c.r.stderr, lockMsg):
				refused++
			default:
				t.Errorf("exit: want exit=unconfirmed or the lock refusal, got %s", c.r)
			}
		}
	}
	t.Logf("lifecycle calls refused by the lock: %d; exit commands typed: %d", refused, exitsTyped)

	// Every submit is exactly one whole message or one exit command.
	want := map[string]int{}
	for _, c := range calls {
		if c.kind == "send" {
			want[c.msg]++
		}
	}
	exitSubmits := 0
	for _, got := range a.submitted() {
		if got == "/exit" {
			exitSubmits++
			continue
		}
		if want[got] == 0 {
			t.Errorf("the agent received a submit that is not one whole message: %q", got)
			continue
		}
		want[got]--
	}
	for msg, n := range want {
		if n != 0 {
			t.Errorf("message %q arrived %d times too few", msg, n)
		}
	}
	if exitSubmits != exitsTyped {
		t.Errorf("%d /exit submits for %d exit commands typed", exitSubmits, exitsTyped)
	}
	after, err := os.ReadFile(metaPath)
	if err != nil || string(after) != string(before) {
		t.Errorf("the record changed under concurrent verbs: %v\nbefore %q\nafter  %q", err, before, after)
	}
}
