package records

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// cline logs each prompt its session takes, at once, as a
// "session.input_sent" telemetry event in ~/.cline/data/logs/cline.log
// (pino JSON lines; 3.0.65's runTurn, read from its binary and seen in
// every tier lab): the session's id, the prompt's length as JavaScript
// counts it (UTF-16 units), and its delivery: "immediate" when it starts a
// turn, "queue" when the TUI holds it behind the running one (it is logged
// again as "immediate" when it is sent). The text itself reaches
// messages.json only when the turn ends, so this is the record's word at
// the submit. Only a session the TUI runs itself logs so (the first TUI of
// a HOME, which starts the hub; clinehub.go reads the others). fm-spawn
// names the log's switches in the launch (harness row cline), so a user's
// CLINE_LOG_LEVEL cannot silence it.
const clineLogName = "cline.log"

// clineLogEvent is the part of one log line the reader needs.
type clineLogEvent struct {
	Time       string `json:"time"`
	Pid        int    `json:"pid"`
	Event      string `json:"event"`
	Properties struct {
		SessionID    string `json:"sessionId"`
		PromptLength int    `json:"promptLength"`
		Delivery     string `json:"delivery"`
	} `json:"properties"`
}

// Submissions lists the prompts cline's log says this worktree's sessions
// took, oldest first. A missing log holds none.
//
// cline logs the submission before it starts the run, and a run that
// cannot start drops the prompt for good: a prompt submitted as a queued
// one was being taken off the queue was logged "immediate" and never run,
// nor written to any record (the tier's five-sends, by the log's
// agent.run-started lines, which name no session). So an immediate
// prompt counts as Started only where the process's next line of the two
// is the run's start and its line before is no immediate prompt still
// waiting for one: the run then is this prompt's.
//
// A process's queue is one line, first in first out, whatever the
// lengths: an immediate prompt of the length of the queue's head is that
// head sent (Dequeued), and one of another length means cline let the
// whole queue go, as 3.0.65 does after an interrupt (it sends the head
// and drops the rest, logging nothing of them; the tier's outage lab).
// So a queued prompt is Sent only by its own turn at the head, never by a
// later prompt of its length.
func (r clineReader) Submissions() ([]Submission, error) {
	sessions, err := r.sessions()
	if err != nil {
		return nil, err
	}
	return r.submissions(sessions)
}

func (r clineReader) submissions(sessions []clineSession) ([]Submission, error) {
	mine := map[string]bool{}
	for _, s := range sessions {
		mine[s.SessionID] = true
	}
	path := filepath.Join(r.w.Home, ".cline", "data", "logs", clineLogName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cline's log: %w", err)
	}
	newest := ""
	if len(sessions) > 0 {
		newest = sessions[len(sessions)-1].SessionID
	}
	input, start := []byte(`"session.input_sent"`), []byte(`"agent.run-started"`)
	var out []Submission
	// waiting is, per process, the index in out of its newest immediate
	// prompt that has no run's start after it yet (-1: none; absent:
	// another session's process, whose lines are not followed).
	waiting := map[int]int{}
	queue := map[int][]int{} // per process, the indexes in out of its queued prompts not yet sent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, input) && !bytes.Contains(line, start) {
			continue // most lines are other events; decode only these
		}
		var ev clineLogEvent
		if json.Unmarshal(line, &ev) != nil {
			continue // a line cut by a concurrent write
		}
		switch prev, followed := waiting[ev.Pid]; {
		case ev.Event == "agent.run-started" && followed && prev >= 0:
			out[prev].Started = true
			waiting[ev.Pid] = -1
		case ev.Event == "session.input_sent" && mine[ev.Properties.SessionID]:
			at, _ := time.Parse(time.RFC3339Nano, ev.Time)
			sub := Submission{Length: ev.Properties.PromptLength, Queued: ev.Properties.Delivery == "queue", Live: ev.Properties.SessionID == newest, Time: at}
			if q := queue[ev.Pid]; !sub.Queued && len(q) > 0 {
				if out[q[0]].Length == sub.Length {
					sub.Dequeued, sub.dequeueOf = true, q[0]+1
					queue[ev.Pid] = q[1:]
				} else {
					for _, i := range q {
						out[i].Dropped = true
					}
					queue[ev.Pid] = nil
				}
			}
			if sub.Queued {
				queue[ev.Pid] = append(queue[ev.Pid], len(out))
			}
			if followed && prev >= 0 && !sub.Queued {
				// Two immediate prompts with no run's start between: the
				// next start cannot tell whose it is, so neither counts.
				out[prev].ambiguous = true
				sub.ambiguous = true
			}
			out = append(out, sub)
			if !sub.Queued {
				waiting[ev.Pid] = len(out) - 1
			} else if !followed {
				waiting[ev.Pid] = -1
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read cline's log: %w", err)
	}
	for i := range out {
		s := &out[i]
		s.Started = s.Started && !s.ambiguous
		if s.dequeueOf > 0 && !s.ambiguous {
			// The queued prompt's fate is its sending's: a run that never
			// started dropped it. An ambiguous one leaves it untold.
			from := &out[s.dequeueOf-1]
			from.Sent, from.Dropped = s.Started, !s.Started
		}
	}
	return out, nil
}
